"""Attack: dumping chips below the volume thresholds (2), against the live platform.

Before the scan read the play, one account playing its worst arrangement against a friend at a
private two-seat table, base 200, moved 22,600 coins in 19 rounds at a 100 % share and nothing
was flagged; with an easy bot in a third seat, 21 rounds and 26,500 coins at 66 %, nothing.

Here both are replayed at once on the real platform (daphne, the Celery worker with beat,
Redis: ``tests.live_server``), every move over the table's WebSocket
(``benchmarks.table_client``): the dumper submits the foul-free split the engine's model values
least (``tests/games/rules/test_dumping.py`` ``worst``), its friend the engine's best. After
ROUNDS rounds (far fewer than 19) the worker runs the collusion scan: each dumper -> friend
pair is flagged, with its evidence (the rounds, the water given away in each), no pair the
other way; the flag's admin page shows it; and ``manage.py ledger_audit`` reconciles.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from celery import Celery

from accounts.models import CollusionFlag, CollusionReason, User
from benchmarks.seating import Lobby
from benchmarks.table_client import TableClient
from games.models import Round
from games.rules.arrange import arrange
from games.rules.cards import format_cards, parse_cards
from games.rules.config import DEFAULT_CONFIG
from tests.games.rules.test_dumping import worst
from tests.games.table_helpers import fast_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 6  # the flag needs 2 to 3 rounds of worst play to a new account's friend
BASE_SCORE = 200
SECONDS = 240  # the whole play's deadline


class Player(TableClient):
    """A seat that submits the engine's best arrangement, or (``dumper``) its worst."""

    def __init__(self, *, dumper: bool, opponents: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dumper = dumper
        self.opponents = opponents

    def _arrangement(self) -> dict[str, list[str]]:
        assert self.hand is not None
        cards = tuple(parse_cards(self.hand))
        if self.dumper:
            arranged = worst(cards, self.opponents)
        else:
            arranged = arrange(
                cards, DEFAULT_CONFIG, limit=1, opponents=self.opponents
            ).best.arranged()
        return {
            "front": format_cards(arranged.front),
            "middle": format_cards(arranged.middle),
            "back": format_cards(arranged.back),
        }


async def _table(
    platform: LivePlatform,
    dumper: User,
    friend: User,
    *,
    rules: int,
    bots: int,
    cookies: dict[int, dict[str, str]],
) -> tuple[int, list[Player]]:
    """A private room of the dumper, base 200, its friend joining by code (and ``bots`` easy
    bots); both play ROUNDS rounds over the table socket."""
    ws_base, origin = platform.ws_url("").rstrip("/"), platform.url
    created = await Lobby(ws_base, origin, cookies[dumper.pk]).act(
        {
            "type": "room.create",
            "name": f"Just us {dumper.username}",
            "base_score": BASE_SCORE,
            "seats": 2 + bots,
            "private": True,
            "rules": rules,
            "bots": bots,
            "bot_level": "easy",
        }
    )
    room, code = int(created["room"]["id"]), created["room"]["code"]
    await Lobby(ws_base, origin, cookies[friend.pk]).act(
        {"type": "room.join_by_code", "code": code}
    )
    clients = [
        Player(
            dumper=user == dumper,
            opponents=1 + bots,
            ws_url=ws_base,
            room_id=room,
            cookie=cookies[user.pk],
            origin=origin,
            name=user.username,
        )
        for user in (dumper, friend)
    ]
    return room, clients


async def _play(
    platform: LivePlatform,
    pairs: list[tuple[User, User, int]],
    rules: int,
    cookies: dict[int, dict[str, str]],
) -> None:
    tables = [
        await _table(platform, d, f, rules=rules, bots=b, cookies=cookies) for d, f, b in pairs
    ]
    clients = [c for _room, table in tables for c in table]
    await asyncio.gather(*(c.play(rounds=ROUNDS, seconds=SECONDS) for c in clients))


def _ledger_reconciles(platform: LivePlatform) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "ledger_audit"],
        env=platform.web.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The ledger reconciles." in done.stdout


def _wait(what: str, check: Any, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.2)


def test_dumping_at_a_private_table_and_beside_a_bot_is_flagged_with_evidence(
    live_platform: LivePlatform,
) -> None:
    rules = fast_rules(name="Collusion (live)", arrange_seconds=30).pk
    alone = (make_player("dumper"), make_player("friend"), 0)
    with_bot = (make_player("dumper2"), make_player("friend2"), 1)

    cookies = {u.pk: session_cookie_for(u) for pair in (alone, with_bot) for u in pair[:2]}

    asyncio.run(_play(live_platform, [alone, with_bot], rules, cookies))

    for dumper, _friend, _bots in (alone, with_bot):
        rounds = Round.objects.filter(players__user=dumper, settled_at__isnull=False)
        assert rounds.count() >= ROUNDS
    # The scan, on the platform's worker (not the process's current app: the shared tasks
    # of later tests keep the test broker).
    Celery(broker=live_platform.redis_url, set_as_current=False).send_task(
        "accounts.tasks.collusion_scan"
    )
    _wait(
        "the scan to flag both dumpers",
        lambda: (
            CollusionFlag.objects.filter(
                loser__in=[alone[0], with_bot[0]],
                reasons__contains=[CollusionReason.DELIBERATE_PLAY],
            ).count()
            == 2
        ),
    )

    for dumper, friend, _bots in (alone, with_bot):
        flag = CollusionFlag.objects.get(loser=dumper)
        assert flag.winner == friend
        assert flag.score >= flag.threshold
        assert CollusionReason.NEW_ACCOUNT in flag.reasons  # both signed up just now
        played = set(
            Round.objects.filter(players__user=dumper, settled_at__isnull=False).values_list(
                "pk", flat=True
            )
        )
        assert 1 <= len(flag.evidence) <= ROUNDS
        for row in flag.evidence:
            assert row["round"] in played
            assert row["sign"] == "worst" and row["better_share"] >= 0.99
            assert row["given"] >= 0
        assert flag.water_given == sum(r["given"] for r in flag.evidence) > 0
        assert sum(r["coins"] for r in flag.evidence) > 0
        assert not CollusionFlag.objects.filter(loser=friend, winner=dumper).exists()

    # Support reads the evidence on the flag's admin page.
    staff = User.objects.create_superuser("support_live", password="not-used-1")
    flag = CollusionFlag.objects.get(loser=with_bot[0])
    cookie = session_cookie_for(staff)
    request = urllib.request.Request(
        f"{live_platform.url}/admin/accounts/collusionflag/{flag.pk}/change/",
        headers={
            "Cookie": "; ".join(f"{k}={v}" for k, v in cookie.items()),
            "Accept-Language": "en",
        },
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        page = answer.read().decode()
    assert "worst 1 % of arrangements" in page
    assert f"/admin/games/round/{flag.evidence[0]['round']}/change/" in page
    assert re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="collusion-ring"', page)

    _ledger_reconciles(live_platform)
