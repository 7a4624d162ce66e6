"""`make run` on SQLite: daphne, the worker and beat write one file at the same time.

Several processes post ledger transfers into one SQLite file at once (each transfer reads,
locks and writes balances, as every service does). With WAL and IMMEDIATE transactions they
queue for the write lock; none may fail with "database is locked", and the ledger must still
reconcile.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 4
TRANSFERS = 40

TRANSFER = """
import random
from accounts.models import User
from accounts.services import wallet_transfer
users = list(User.objects.filter(username__startswith="p").order_by("pk"))
rng = random.Random(SEED)
for number in range(TRANSFERS):
    source, destination = rng.sample(users, 2)
    User.objects.filter(pk=source.pk).exists()  # a read first, as the services do
    wallet_transfer(source=source, destination=destination, amount=rng.randint(1, 50),
                    idempotency_key=f"wSEED:{number}")
print("done")
"""


def _transfers(seed: int) -> str:
    return TRANSFER.replace("SEED", str(seed)).replace("TRANSFERS", str(TRANSFERS))


SIGN_UP = """
from accounts.services import user_signup
for number in range(4):
    user_signup(username=f"p{number}", password="pw-not-checked")
"""


def _env(database: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env["SQLITE_PATH"] = str(database)
    return env


def _manage(database: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(database),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_concurrent_writers_queue_instead_of_failing(tmp_path: Path) -> None:
    database = tmp_path / "db.sqlite3"
    for args in (("migrate", "--noinput"), ("shell", "--no-imports", "-c", SIGN_UP)):
        done = _manage(database, *args)
        assert done.returncode == 0, done.stderr

    writers = [
        subprocess.Popen(
            [sys.executable, "manage.py", "shell", "--no-imports", "-c", _transfers(n)],
            cwd=ROOT,
            env=_env(database),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    outputs = [writer.communicate(timeout=180) for writer in writers]

    for writer, (out, err) in zip(writers, outputs, strict=True):
        assert "database is locked" not in err
        assert writer.returncode == 0, err
        assert out.strip() == "done"
    audit = _manage(database, "ledger_audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert f"{4 + PROCESSES * TRANSFERS} transactions" in audit.stdout
