"""The capacity script's summaries (benchmarks.capacity): what a ramp step's line says."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import F

from accounts.models import Account
from benchmarks.capacity import ledger_reconciles, tail_summary
from tests.games.table_helpers import make_player
from tests.live_server import database_url_of


def test_a_ramp_step_says_its_p99_by_action_and_where_its_tail_was_sent() -> None:
    result = {
        "by_action": {
            "ready": {"p50_ms": 9.6, "p99_ms": 90.3, "samples": 8061},
            "ready+deal": {"p50_ms": 24.7, "p99_ms": 198.3, "samples": 2688},
            "submitted": {"p50_ms": 10.7, "p99_ms": 99.6, "samples": 8064},
            "submitted+settled": {"p50_ms": 25.8, "p99_ms": 107.6, "samples": 2688},
        },
        "tail": {"samples": 215, "share": 0.58, "windows": [(19.0, 96), (13.5, 50), (0.0, 14)]},
    }
    assert tail_summary(result) == (
        "p99 by action: ready=90 ready+deal=198 submitted=100 submitted+settled=108 ms; "
        "the slowest 1 %: 58 % of it sent in the 3 worst half-seconds (19 s, 13.5 s, 0 s)"
    )
    # With how busy those half-seconds were (benchmarks.load_result's tail_windows "sent").
    result["tail"] = {**result["tail"], "sent": [260, 231, 120], "mean_sent": 197.4}
    assert tail_summary(result).endswith(
        "worst half-seconds (19 s, 13.5 s, 0 s; they sent 260/231/120 samples, a mean "
        "half-second 197)"
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.ledger_broken_on_purpose
def test_the_capacity_runs_end_with_the_ledger_audit(capsys: pytest.CaptureFixture[str]) -> None:
    """After its bursts and ramps the capacity script reconciles the platform's ledger
    (``manage.py ledger_audit`` on its database) and says so; a coin out of place fails it."""
    if connection.vendor != "postgresql":
        pytest.skip("the capacity figures run on PostgreSQL")
    url = database_url_of(connection.settings_dict)
    player = make_player("counted")
    assert ledger_reconciles(url)
    assert "The ledger reconciles." in capsys.readouterr().out

    # A coin from nowhere, past the database's own guard (its triggers off for this session).
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        try:
            Account.objects.filter(user=player).update(balance=F("balance") + 1)
        finally:
            cursor.execute("SET session_replication_role = DEFAULT")
    assert not ledger_reconciles(url)
    assert "does not reconcile" in capsys.readouterr().out
