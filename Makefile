# Everything runs from .venv/bin; nothing needs the virtual environment activated.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# The tests use the real services on loopback unless these are set in the environment.
TEST_DATABASE_URL := postgres://postgres@127.0.0.1:5432/shisanshui
TEST_REDIS_URL := redis://127.0.0.1:6379/0

.PHONY: venv run test lint fmt bench run-cluster

venv: $(STAMP)

# Reinstall only when pyproject.toml is newer than the last install.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "Python 3.11 or newer is needed (found $(PYTHON))" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(STAMP)

# Migrates, creates the default rules and the demo admin (credentials printed), then runs
# daphne, a Celery worker, Celery beat and (without REDIS_URL) an embedded Redis under honcho.
# PORT (8000), EMBEDDED_REDIS_PORT (6380), REDIS_URL, DATABASE_URL: see scripts/run.py.
run: venv
	exec $(BIN)/python scripts/run.py

test: venv
	scripts/ensure-services
	scripts/ensure-chromium
	scripts/ensure-haproxy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict games/rules games/table
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
		REDIS_URL="$${REDIS_URL:-$(TEST_REDIS_URL)}" \
		$(BIN)/pytest

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict games/rules games/table

fmt: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: venv
	$(BIN)/python -m benchmarks.engine

# `make run`'s platform as a cluster: HAProxy on HOST:PORT in front of WEB_PROCESSES (2)
# daphne processes, WORKER_PROCESSES (2) Celery workers and one beat (docs/run-and-deploy.md).
run-cluster: venv
	scripts/ensure-haproxy
	exec $(BIN)/python scripts/run.py --cluster
