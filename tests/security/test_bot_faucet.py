"""Attack: beat easy bots again and again to mint coins, against the live platform.

Real daphne, Celery worker (the bots' tasks) and Redis (``tests.live_server``). Before the
fix every bot short of the entry minimum was refunded from the mint, so beating easy bots was
an unlimited faucet (+9,400 in 12 rounds). Now bots play from the house's bankroll and the
mint tops the house up only within the daily bot-funding ceiling: however many rounds the
player wins, the coins minted for bots stay within the ceiling, the bots stand up once the
house cannot fund them, and ``manage.py ledger_audit`` reconciles afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import io

from django.core.management import call_command
from django.db.models import Sum

from accounts.models import (
    BOT_FUNDING_REASON,
    AccountKind,
    EconomySettings,
    Entry,
    MintDay,
    MintKind,
    Transaction,
    TransactionKind,
)
from benchmarks.seating import Lobby
from benchmarks.table_client import TableClient
from games.models import Round, RuleConfiguration
from lobby.checks import entry_minimum
from tests.accounts.helpers import balance_of, system_balance
from tests.games.table_helpers import make_player
from tests.live_server import LivePlatform, session_cookie_for
from tests.security.test_economy import _ledger_reconciles

ROUNDS = 12
PLAY_SECONDS = 150


def test_beating_easy_bots_mints_no_more_than_the_bot_funding_ceiling(
    live_platform: LivePlatform,
) -> None:
    out = io.StringIO()
    call_command("load_test_rules", stdout=out)
    rules = int(out.getvalue().strip())
    minimum = entry_minimum(rules=RuleConfiguration.objects.get(pk=rules), base_score=1)
    # Enough to seat three bots and refund them about once more; then the bankroll is spent.
    ceiling = 4 * minimum
    EconomySettings.objects.update_or_create(pk=1, defaults={"mint_ceiling_bot_funding": ceiling})
    player = make_player("faucet")
    start = balance_of(player)
    cookie = session_cookie_for(player)
    ws_base = live_platform.ws_url("").rstrip("/")

    created = asyncio.run(
        Lobby(ws_base, live_platform.url, cookie).act(
            {
                "type": "room.create",
                "name": "faucet",
                "base_score": 1,
                "seats": 4,
                "rules": rules,
                "bots": 3,
                "bot_level": "easy",
            }
        )
    )
    client = TableClient(
        ws_url=ws_base,
        room_id=int(created["room"]["id"]),
        cookie=cookie,
        origin=live_platform.url,
        name="faucet",
    )
    # Past the ceiling the bots stand up (the house cannot fund them): no round can start, and
    # the client waits until its time is up.
    with contextlib.suppress(TimeoutError):
        asyncio.run(client.play(rounds=ROUNDS, seconds=PLAY_SECONDS))

    played = Round.objects.filter(settled_at__isnull=False).count()
    assert played >= 1
    minted = MintDay.objects.filter(kind=MintKind.BOT_FUNDING).aggregate(total=Sum("minted"))
    minted_for_bots = int(minted["total"] or 0)
    assert 0 < minted_for_bots <= ceiling
    # Every coin the mint issued for bots went to the house, within the budget; none to a bot.
    topped_up = Entry.objects.filter(
        transaction__kind=TransactionKind.HOUSE_FUNDING, account__kind=AccountKind.HOUSE
    ).aggregate(total=Sum("amount"))
    assert int(topped_up["total"] or 0) == minted_for_bots
    assert not Transaction.objects.filter(
        kind=TransactionKind.GRANT, reason=BOT_FUNDING_REASON
    ).exists()
    # The player's gain came out of the bots and the house, which the mint fed at most the
    # ceiling: beating bots mints nothing beyond it.
    assert balance_of(player) - start <= ceiling
    assert system_balance(AccountKind.HOUSE) >= 0
    _ledger_reconciles(live_platform)
