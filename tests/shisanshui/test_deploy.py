"""Production settings pass `manage.py check --deploy`, and SQLite is set up for `make run`.

Settings are read once per process, so each case runs manage.py in a subprocess with its
own environment.
"""

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _environment(**values: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "SECRET_KEY"}
        and not key.startswith(("DJANGO_", "LOG_", "SECURE_"))
    }
    env.update(values)
    return env


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_environment(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "shisanshui.settings.production",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "play.example.com,www.play.example.com",
    "DATABASE_URL": "postgres://shisanshui@db.internal:5432/shisanshui",
    "REDIS_URL": "redis://redis.internal:6379/0",
}


def test_check_deploy_is_clean_with_production_settings() -> None:
    done = _manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout
    assert "WARNING" not in done.stderr


def test_production_settings_are_secure_and_log_json() -> None:
    code = (
        "from django.conf import settings as s; "
        "print(s.DEBUG, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, "
        "s.SECURE_PROXY_SSL_HEADER[0], s.LOG_FORMAT, s.CSRF_TRUSTED_ORIGINS[0], "
        "s.DATABASES['default']['CONN_MAX_AGE'] > 0, "
        "s.STORAGES['staticfiles']['BACKEND'].rsplit('.', 1)[1])"
    )
    done = _manage("shell", "--no-imports", "-c", code, **PRODUCTION)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "False",
        "True",
        "True",
        "True",
        "HTTP_X_FORWARDED_PROTO",
        "json",
        "https://play.example.com",
        "True",
        "StaticFilesStorage",
    ]


def test_collectstatic_hashes_the_table_modules_and_the_imports_between_them(
    tmp_path: Path,
) -> None:
    """The table page's ES modules import each other by relative names; in production those
    names are rewritten to the hashed files, so one deploy's main.js never loads another's
    state.js from a cache (shisanshui/staticfiles.py)."""
    import json

    done = _manage("collectstatic", "--noinput", **PRODUCTION, STATIC_ROOT=str(tmp_path))

    assert done.returncode == 0, done.stderr
    paths = json.loads((tmp_path / "staticfiles.json").read_text())["paths"]
    main = (tmp_path / paths["games/table/main.js"]).read_text()
    state = Path(paths["games/table/state.js"]).name
    assert state != "state.js" and f'"./{state}"' in main
    assert '"./state.js"' not in main


def test_production_settings_refuse_to_start_without_a_secret_key() -> None:
    env = {key: value for key, value in PRODUCTION.items() if key != "DJANGO_SECRET_KEY"}

    done = _manage("check", **env)

    assert done.returncode != 0
    assert "DJANGO_SECRET_KEY" in done.stderr


def test_production_settings_refuse_sqlite_and_the_in_process_channel_layer() -> None:
    no_database = {key: value for key, value in PRODUCTION.items() if key != "DATABASE_URL"}
    no_redis = {key: value for key, value in PRODUCTION.items() if key != "REDIS_URL"}

    assert "DATABASE_URL" in _manage("check", **no_database).stderr
    assert "REDIS_URL" in _manage("check", **no_redis).stderr


def test_sqlite_runs_in_wal_mode_with_immediate_transactions(tmp_path: Path) -> None:
    code = (
        "from django.db import connection; "
        "c = connection.cursor(); c.execute('PRAGMA journal_mode'); "
        "print(c.fetchone()[0], connection.transaction_mode, connection.settings_dict['NAME'])"
    )
    database = tmp_path / "demo.sqlite3"

    done = _manage("shell", "--no-imports", "-c", code, SQLITE_PATH=str(database))

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["wal", "IMMEDIATE", str(database)]


def test_sessions_are_read_from_the_shared_cache_only_where_there_is_one(tmp_path: Path) -> None:
    """With Redis, sessions are read from it and written through to the database (a socket's
    handshake and every page load their session); without it, from the database alone (each
    process's own cache would keep a session that another process has ended)."""
    code = "from django.conf import settings as s; print(s.SESSION_ENGINE)"
    with_redis = _manage("shell", "--no-imports", "-c", code, **PRODUCTION)
    sqlite = str(tmp_path / "db.sqlite3")
    alone = _manage(
        "shell",
        "--no-imports",
        "-c",
        code,
        DJANGO_SETTINGS_MODULE="shisanshui.settings.local",
        DATABASE_URL=f"sqlite:///{sqlite}",
    )

    assert with_redis.returncode == 0 and alone.returncode == 0, with_redis.stderr + alone.stderr
    assert with_redis.stdout.split()[-1] == "django.contrib.sessions.backends.cached_db"
    assert alone.stdout.split()[-1] == "django.contrib.sessions.backends.db"
