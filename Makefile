# Everything runs from .venv/bin; nothing needs the virtual environment activated.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# The tests use the real services on loopback unless these are set in the environment.
TEST_DATABASE_URL := postgres://postgres@127.0.0.1:5432/shisanshui
TEST_REDIS_URL := redis://127.0.0.1:6379/0
# pytest-xdist processes (`make test TEST_WORKERS=1` runs serially). Most of the suite's time
# is spent waiting for the live platforms and the browser, so 2 on this 2-core machine nearly
# halves it. `--dist load` hands each worker its tests in collection order, which pytest-django
# made "transaction-rollback tests first": no test then runs after a flush it does not expect.
# Each worker has its own database, channel-layer prefix and rate-limit prefix. The tests that
# start processes (marked `live`: the live platform, daphne, a Celery worker, the load, soak,
# fault and cluster tests) or drive Chromium (`browser`; tests/conftest.py marks both) race
# real processes against the clock: they run after the rest, in LIVE_WORKERS processes (2:
# each test still has its platform and browser to itself, and at most two run at once), a
# whole file per process (`--dist loadfile`, so a module's platform is started once).
TEST_WORKERS ?= 2
LIVE_WORKERS ?= 2
TEST_ENV := DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
	REDIS_URL="$${REDIS_URL:-$(TEST_REDIS_URL)}"
FAST_TESTS := $(BIN)/pytest $(if $(filter-out 0 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist load) \
	-m "not live and not browser"
LIVE_TESTS := $(BIN)/pytest $(if $(filter-out 0 1,$(LIVE_WORKERS)),-n $(LIVE_WORKERS) --dist loadfile) \
	-m "live or browser" --durations=20

.PHONY: venv lock run test test-fast test-pure lint fmt bench run-cluster

venv: $(STAMP)

# Reinstall only when pyproject.toml or the lock file is newer than the last install: the exact
# versions of requirements-dev.lock, each checked against its hashes, then the project itself
# without resolving anything again (its build backend, setuptools, is in the lock file).
$(STAMP): pyproject.toml requirements-dev.lock
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "Python 3.11 or newer is needed (found $(PYTHON))" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --require-hashes -r requirements-dev.lock
	$(BIN)/python -m pip install --no-deps --no-build-isolation -e .
	touch $(STAMP)

# The lock files, for Python 3.11 on Linux x86_64, every file's sha256 listed: requirements.lock
# (the runtime dependencies: what a deploy installs) and requirements-dev.lock (plus the dev
# extra: what `make venv` installs), both with pyproject.toml's build-system requirements. Run
# it after changing pyproject.toml's dependencies. Pins that still fit are kept;
# `make lock UPGRADE=1` moves everything to the newest versions. The runtime file takes its
# versions from the dev file, so the two never disagree. uv runs from a throwaway venv.
UV_VERSION := 0.13.9
LOCK_FLAGS := --quiet --generate-hashes --no-strip-markers --python-version 3.11 \
	--python-platform x86_64-unknown-linux-gnu --custom-compile-command 'make lock' \
	$(if $(UPGRADE),--upgrade)
BUILD_REQUIRES := $(PYTHON) -c 'import tomllib; \
	print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")'
lock:
	tool=$$(mktemp -d) && trap 'rm -rf "$$tool"' EXIT \
		&& $(PYTHON) -m venv "$$tool" \
		&& "$$tool/bin/python" -m pip install --quiet 'uv==$(UV_VERSION)' \
		&& $(BUILD_REQUIRES) | "$$tool/bin/uv" pip compile $(LOCK_FLAGS) \
			pyproject.toml - --extra dev -o requirements-dev.lock \
		&& $(BUILD_REQUIRES) | "$$tool/bin/uv" pip compile $(LOCK_FLAGS) \
			pyproject.toml - -c requirements-dev.lock -o requirements.lock

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
	$(TEST_ENV) sh -c '$(FAST_TESTS) && $(LIVE_TESTS)'

# `make test` without the live and browser tests: lint, types, then every test that starts no
# process and drives no browser, as `make test` runs them first. Chromium and HAProxy are not
# needed; PostgreSQL and Redis are (scripts/ensure-services).
test-fast: venv
	scripts/ensure-services
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict games/rules games/table
	$(TEST_ENV) $(FAST_TESTS)

# The rules engine's and the table machine's tests, without Django, services or a database.
test-pure: venv
	$(BIN)/pytest -p no:django tests/games/rules tests/games/table

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
