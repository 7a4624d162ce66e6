"""The mint's daily budget (accounts.mint): a ceiling per kind and UTC day on what the mint
issues, taken under a lock, refused with a clear message past it (nothing written), support
alerted; the ceilings as economy settings (bounds, propose/approve); the mint report."""

import threading
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.utils import translation

from accounts.economy import daily_bonus_status, relief_status
from accounts.errors import EconomyChangeRefused, MintBudgetExhausted, SignupRefused
from accounts.groups import ECONOMY_ADMIN, RULES_ADMIN, SUPPORT
from accounts.mint import mint_alerts, mint_report
from accounts.models import (
    ECONOMY_BOUNDS,
    EconomySettings,
    MintDay,
    MintKind,
    Transaction,
    TransactionKind,
    User,
)
from accounts.selectors import ledger_audit, wallet_balance
from accounts.services import (
    economy_change_approve,
    economy_change_propose,
    economy_settings_get_or_create,
    user_signup,
    wallet_daily_bonus_claim,
    wallet_house_level,
    wallet_relief_claim,
    wallet_transfer,
)
from tests.accounts.conftest import MakePlayer
from tests.accounts.helpers import requires_postgresql

NOON = datetime(2026, 3, 1, 12, tzinfo=UTC)
DAY = NOON.date()
REPORT_URL = "/admin/accounts/mintday/"


def _ceilings(**values: int) -> EconomySettings:
    """Set economy values directly (the tests' shortcut past propose/approve)."""
    economy = economy_settings_get_or_create()
    for name, value in values.items():
        setattr(economy, name, value)
    economy.save()
    return economy


def _minted(kind: str) -> int:
    row = MintDay.objects.filter(kind=kind, day=DAY).first()
    return 0 if row is None else row.minted


def _staff(username: str, group: str | None = None) -> User:
    user = User.objects.create_user(username=username, password="x", is_staff=True)
    if group is not None:
        user.groups.add(Group.objects.get(name=group))
    return user


# Each ceiling.


@pytest.mark.django_db
def test_sign_ups_past_the_grant_ceiling_are_refused_and_write_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    _ceilings(signup_grant=1_000, mint_ceiling_signup=2_500)
    user_signup(username="first", password=None, now=NOON)
    user_signup(username="second", password=None, now=NOON)
    users, transactions = User.objects.count(), Transaction.objects.count()

    with translation.override("zh-hans"), pytest.raises(SignupRefused) as refused:
        user_signup(username="third", password=None, now=NOON)

    assert refused.value.code == "mint_ceiling"
    assert "注册赠币已发完" in refused.value.message and "UTC 00:00" in refused.value.message
    assert (User.objects.count(), Transaction.objects.count()) == (users, transactions)
    assert _minted(MintKind.SIGNUP) == 2_000
    assert "mint ceiling reached: signup" in caplog.text
    # The next UTC day has a budget of its own.
    user_signup(username="third", password=None, now=NOON.replace(day=2))


@pytest.mark.django_db
def test_the_sign_up_refusal_reads_in_english() -> None:
    _ceilings(signup_grant=1_000, mint_ceiling_signup=0)
    with translation.override("en"), pytest.raises(SignupRefused) as refused:
        user_signup(username="late", password=None, now=NOON)
    assert refused.value.message == (
        "Today's sign-up grants are used up, so no new account can be opened now. "
        "Please try again from 00:00 UTC."
    )


@pytest.mark.django_db
def test_daily_bonuses_past_the_ceiling_are_refused(
    make_player: MakePlayer, caplog: pytest.LogCaptureFixture
) -> None:
    _ceilings(daily_bonus=2_000, mint_ceiling_daily_bonus=5_000)
    players = [make_player(0) for _ in range(4)]
    wallet_daily_bonus_claim(user=players[0], now=NOON)
    wallet_daily_bonus_claim(user=players[1], now=NOON)
    before = Transaction.objects.count()

    status = daily_bonus_status(user=players[2], now=NOON)
    assert not status.claimable and status.code == "mint_ceiling"
    with pytest.raises(MintBudgetExhausted) as refused:
        wallet_daily_bonus_claim(user=players[2], now=NOON)
    with pytest.raises(MintBudgetExhausted):
        wallet_daily_bonus_claim(user=players[3], now=NOON)

    assert refused.value.code == "mint_ceiling" and refused.value.kind == MintKind.DAILY_BONUS
    assert "daily bonuses are used up" in refused.value.message
    assert Transaction.objects.count() == before and wallet_balance(user=players[2]) == 0
    assert _minted(MintKind.DAILY_BONUS) == 4_000
    # Support is alerted: one warning for the day and kind, every refusal counted.
    assert caplog.text.count("mint ceiling reached: daily_bonus") == 1
    assert mint_alerts([DAY]) == {(DAY, "daily_bonus"): 2}


@pytest.mark.django_db
def test_relief_past_the_ceiling_is_refused(make_player: MakePlayer) -> None:
    _ceilings(relief_amount=10_000, mint_ceiling_relief=10_000)
    first, second = make_player(0), make_player(0)
    wallet_relief_claim(user=first, now=NOON)

    assert relief_status(user=second, now=NOON).code == "mint_ceiling"
    with translation.override("zh-hans"), pytest.raises(MintBudgetExhausted) as refused:
        wallet_relief_claim(user=second, now=NOON)

    assert "救济金已发完" in refused.value.message
    assert wallet_balance(user=second) == 0 and _minted(MintKind.RELIEF) == 10_000


@pytest.mark.django_db
def test_a_claim_that_rolls_back_takes_nothing_from_the_budget(make_player: MakePlayer) -> None:
    _ceilings(daily_bonus=2_000, mint_ceiling_daily_bonus=2_000)
    player = make_player(0)
    with pytest.raises(RuntimeError), transaction.atomic():
        wallet_daily_bonus_claim(user=player, now=NOON)
        raise RuntimeError("the caller failed")

    assert _minted(MintKind.DAILY_BONUS) == 0
    wallet_daily_bonus_claim(user=player, now=NOON)
    assert _minted(MintKind.DAILY_BONUS) == 2_000


@requires_postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_cannot_overshoot_the_ceiling(make_player: MakePlayer) -> None:
    """Eight players claim their bonus at once against a ceiling of three: exactly three are
    paid, each refused one is told why, and the budget shows exactly the ceiling."""
    _ceilings(daily_bonus=1_000, mint_ceiling_daily_bonus=3_000)
    players = [make_player(0) for _ in range(8)]
    start = threading.Barrier(len(players))
    outcomes: list[str] = []

    def claim(player: User) -> None:
        try:
            start.wait()
            wallet_daily_bonus_claim(user=player, now=NOON)
            outcomes.append("paid")
        except MintBudgetExhausted:
            outcomes.append("refused")
        except Exception as error:  # a deadlock or anything else fails the test
            outcomes.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(p,)) for p in players]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(outcomes) == ["paid"] * 3 + ["refused"] * 5
    assert _minted(MintKind.DAILY_BONUS) == 3_000
    assert Transaction.objects.filter(kind=TransactionKind.DAILY_BONUS).count() == 3
    assert ledger_audit().ok


# The house's bankroll.


@pytest.mark.django_db
def test_the_house_pays_first_and_the_mint_tops_it_up_only_within_the_ceiling(
    make_player: MakePlayer,
) -> None:
    _ceilings(mint_ceiling_bot_funding=1_500)
    bot = make_player(0)

    moved = wallet_house_level(user=bot, target=1_000, key="t:1", reference="room:1")
    assert (moved.funded, moved.swept, moved.minted) == (1_000, 0, 1_000)
    # The bot wins 700 from a player: above its target, they go back to the house...
    loser = make_player(700)
    wallet_transfer(source=loser, destination=bot, amount=700, idempotency_key="win")
    swept = wallet_house_level(user=bot, target=1_000, key="t:3", reference="room:1")
    assert swept.swept == 700 and wallet_balance(user=bot) == 1_000
    # ...and fund the next bot before the mint does.
    other = make_player(0)
    moved = wallet_house_level(user=other, target=1_000, key="t:4", reference="room:1")
    assert (moved.funded, moved.minted) == (1_000, 300)
    assert _minted_today(MintKind.BOT_FUNDING) == 1_300
    # Past the ceiling: refused, nothing moves.
    third = make_player(0)
    before = Transaction.objects.count()
    with pytest.raises(MintBudgetExhausted) as refused:
        wallet_house_level(user=third, target=1_000, key="t:5", reference="room:1")
    assert refused.value.kind == MintKind.BOT_FUNDING
    assert Transaction.objects.count() == before and wallet_balance(user=third) == 0


def _minted_today(kind: str) -> int:
    row = MintDay.objects.filter(kind=kind).order_by("-day").first()
    return 0 if row is None else row.minted


# The ceilings as settings.


@pytest.mark.django_db
def test_the_ceilings_change_only_through_propose_and_approve() -> None:
    proposer = _staff("economist", ECONOMY_ADMIN)
    approver = _staff("treasurer", ECONOMY_ADMIN)
    change = economy_change_propose(
        user=proposer, values={"mint_ceiling_relief": 1_000, "table_fee_percent": 5}
    )
    assert economy_settings_get_or_create().mint_ceiling_relief == 20_000_000

    economy_change_approve(change=change, approver=approver)

    economy = economy_settings_get_or_create()
    assert (economy.mint_ceiling_relief, economy.table_fee_percent) == (1_000, 5)
    with pytest.raises(EconomyChangeRefused):
        economy_change_propose(user=_staff("rules", RULES_ADMIN), values={"table_fee_percent": 1})


@pytest.mark.django_db
@pytest.mark.parametrize(
    "field",
    [
        "mint_ceiling_signup",
        "mint_ceiling_daily_bonus",
        "mint_ceiling_relief",
        "mint_ceiling_bot_funding",
        "mint_ceiling_guest",
        "guest_grant",
        "table_fee_percent",
    ],
)
def test_a_ceiling_beyond_its_bound_is_refused_by_the_model_and_the_database(field: str) -> None:
    proposer = _staff("economist", ECONOMY_ADMIN)
    with pytest.raises(EconomyChangeRefused) as refused:
        economy_change_propose(user=proposer, values={field: ECONOMY_BOUNDS[field] + 1})
    assert refused.value.code == "invalid"
    with pytest.raises(EconomyChangeRefused):
        economy_change_propose(user=proposer, values={field: -1})
    economy_settings_get_or_create()
    with pytest.raises(IntegrityError), transaction.atomic():
        EconomySettings.objects.update(**{field: ECONOMY_BOUNDS[field] + 1})


# The mint report.


@pytest.mark.django_db
def test_the_mint_report_shows_each_day_by_kind_against_its_ceiling(
    make_player: MakePlayer,
) -> None:
    _ceilings(daily_bonus=2_000, mint_ceiling_daily_bonus=2_000)
    first, second = make_player(0), make_player(0)
    wallet_daily_bonus_claim(user=first)
    with pytest.raises(MintBudgetExhausted):
        wallet_daily_bonus_claim(user=second)

    report = mint_report(economy=economy_settings_get_or_create())
    assert len(report) == 30
    cells = {cell.kind: cell for cell in report[0].cells}
    assert (cells["daily_bonus"].minted, cells["daily_bonus"].ceiling) == (2_000, 2_000)
    assert cells["daily_bonus"].state == "refused" and cells["relief"].state == "ok"

    support = Client()
    support.force_login(_staff("helper", SUPPORT))
    page = support.get(REPORT_URL, HTTP_ACCEPT_LANGUAGE="en")
    assert page.status_code == 200
    text = page.content.decode()
    assert "2,000 / 2,000 (100%)" in text and "Ceiling reached: 1 claim refused" in text
    assert 'data-kind="daily_bonus" data-state="refused"' in text
    index = support.get("/admin/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Mint ceiling reached today: Daily bonuses" in index
    chinese = support.get(REPORT_URL, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "铸币报表" in chinese and "已达上限" in chinese


@pytest.mark.django_db
def test_the_mint_report_is_for_staff_who_may_read_the_economy(make_player: MakePlayer) -> None:
    economist = Client()
    economist.force_login(_staff("economist", ECONOMY_ADMIN))
    assert economist.get(REPORT_URL).status_code == 200
    assert economist.get(REPORT_URL + "1/change/").status_code == 302

    plain_staff = Client()
    plain_staff.force_login(_staff("nobody"))
    assert plain_staff.get(REPORT_URL).status_code == 403
    assert "Mint ceiling" not in plain_staff.get("/admin/").content.decode()

    player = Client()
    player.force_login(make_player(0))
    response = player.get(REPORT_URL)
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert Client().get(REPORT_URL).status_code == 302
