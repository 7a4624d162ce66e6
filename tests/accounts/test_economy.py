"""The economy: the sign-up grant and limit per address, the daily bonus and relief.

Each grant is a ledger posting of its own kind from the mint, under an idempotency key that
makes a second one impossible; each refusal has a code and a message and writes nothing; the
profile page's buttons and the API say the same.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from accounts.economy import (
    daily_bonus_status,
    economy_settings,
    network_address,
    next_utc_midnight,
    relief_status,
)
from accounts.errors import ClaimRefused, SignupRefused
from accounts.models import (
    AccountKind,
    EconomySettings,
    SignupQuota,
    Transaction,
    TransactionKind,
    User,
)
from accounts.selectors import ledger_audit
from accounts.services import (
    user_signup,
    wallet_daily_bonus_claim,
    wallet_relief_claim,
    wallet_transfer,
)
from tests.accounts.conftest import MakePlayer
from tests.accounts.helpers import balance_of, ledger_counts, requires_postgresql, system_balance

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery-9"
DAY = datetime(2026, 6, 1, 10, 0, tzinfo=UTC)


def _economy(**values: int | None) -> EconomySettings:
    economy = economy_settings()
    for name, value in values.items():
        setattr(economy, name, value)
    economy.full_clean()
    economy.save()
    return economy


@pytest.fixture(autouse=True)
def _fresh_throttles() -> None:
    """The claim throttles count in the cache, which outlives a test."""
    cache.clear()


def _refused(code: str, claim, **kwargs) -> ClaimRefused:  # type: ignore[no-untyped-def]
    counts = ledger_counts()
    with pytest.raises(ClaimRefused) as caught:
        claim(**kwargs)
    assert caught.value.code == code, caught.value.message
    assert ledger_counts() == counts
    return caught.value


# The settings.


def test_the_defaults_apply_until_the_settings_are_saved(settings) -> None:
    settings.SIGNUP_GRANT = 7_000

    economy = economy_settings()

    assert economy.pk == 1 and not EconomySettings.objects.exists()
    assert economy.effective_signup_grant == 7_000
    assert (economy.daily_bonus, economy.relief_amount, economy.relief_below) == (
        2_000,
        10_000,
        5_000,
    )
    assert (economy.relief_per_day, economy.signups_per_address_per_day) == (2, 5)
    assert (
        economy.collusion_min_rounds,
        economy.collusion_days,
        economy.collusion_min_share_percent,
        economy.collusion_min_flow,
    ) == (20, 7, 80, 20_000)
    _economy(signup_grant=0)
    assert economy_settings().effective_signup_grant == 0


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"daily_bonus": -1}, "daily_bonus"),
        ({"signup_grant": -5}, "signup_grant"),
        ({"relief_amount": -1}, "relief_amount"),
        ({"relief_below": -1}, "relief_below"),
        ({"collusion_min_flow": -1}, "collusion_min_flow"),
        ({"daily_bonus": 10**15 + 1}, "daily_bonus"),
        ({"relief_below": 0}, "relief_below"),
        ({"relief_per_day": 0}, "relief_per_day"),
        ({"relief_per_day": 101}, "relief_per_day"),
        ({"collusion_min_rounds": 0}, "collusion_min_rounds"),
        ({"collusion_days": 0}, "collusion_days"),
        ({"collusion_days": 366}, "collusion_days"),
        ({"collusion_min_share_percent": 0}, "collusion_min_share_percent"),
        ({"collusion_min_share_percent": 101}, "collusion_min_share_percent"),
    ],
)
def test_unusable_settings_are_refused_with_the_field_named(values: dict, field: str) -> None:
    economy = EconomySettings(pk=1, **values)

    with pytest.raises(ValidationError) as caught:
        economy.full_clean()

    assert field in caught.value.message_dict


def test_relief_may_be_turned_off_with_no_threshold() -> None:
    EconomySettings(pk=1, relief_amount=0, relief_below=0, relief_per_day=0).full_clean()


def test_the_database_refuses_negative_amounts_and_a_second_row() -> None:
    from django.db import IntegrityError, transaction

    for values in ({"pk": 1, "daily_bonus": -1}, {"pk": 2}):
        with pytest.raises(IntegrityError), transaction.atomic():
            EconomySettings.objects.create(**values)


# Sign-up: the grant, and the limit per address.


def test_the_sign_up_grant_comes_from_the_settings_row(settings) -> None:
    settings.SIGNUP_GRANT = 100_000
    _economy(signup_grant=2_500)

    user = user_signup(username="newbie", password=PASSWORD)

    assert balance_of(user) == 2_500
    grant = Transaction.objects.get(reference=f"user:{user.pk}")
    assert grant.kind == TransactionKind.GRANT


def test_sign_ups_per_address_per_day_are_limited() -> None:
    _economy(signups_per_address_per_day=2)
    for name in ("one", "two"):
        user_signup(username=name, password=PASSWORD, ip_address="203.0.113.9", now=DAY)
    counts, users = ledger_counts(), User.objects.count()

    with pytest.raises(SignupRefused) as caught:
        user_signup(username="three", password=PASSWORD, ip_address="203.0.113.9", now=DAY)

    assert caught.value.code == "signup_limit"
    assert "2 accounts have already been created" in caught.value.message
    assert (ledger_counts(), User.objects.count()) == (counts, users)
    # Another address, or the next UTC day, may sign up.
    user_signup(username="four", password=PASSWORD, ip_address="203.0.113.10", now=DAY)
    user_signup(
        username="five", password=PASSWORD, ip_address="203.0.113.9", now=DAY + timedelta(days=1)
    )
    assert SignupQuota.objects.get(address="203.0.113.9", day=DAY.date()).count == 2


def test_an_ipv6_network_counts_as_one_address() -> None:
    assert network_address("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64"
    assert network_address("::ffff:198.51.100.7") == "198.51.100.7"
    assert network_address("") == network_address(None) == network_address("junk") == "unknown"
    _economy(signups_per_address_per_day=1)
    user_signup(username="v6a", password=PASSWORD, ip_address="2001:db8:1:2::1", now=DAY)

    with pytest.raises(SignupRefused):
        user_signup(username="v6b", password=PASSWORD, ip_address="2001:db8:1:2::ff", now=DAY)


def test_zero_means_no_limit_and_sign_ups_are_still_counted() -> None:
    _economy(signups_per_address_per_day=0)
    for index in range(7):
        user_signup(username=f"n{index}", password=PASSWORD, ip_address="192.0.2.1", now=DAY)

    assert SignupQuota.objects.get(address="192.0.2.1").count == 7


def test_a_failed_sign_up_does_not_count(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.db import IntegrityError

    from accounts import services

    _economy(signups_per_address_per_day=1)
    User.objects.create_user(username="taken", password="x")

    with pytest.raises(SignupRefused) as refused:  # refused before anything is written
        user_signup(username="taken", password=PASSWORD, ip_address="192.0.2.2", now=DAY)
    assert refused.value.code == "name_taken"
    # The name taken between the check and the insert: the insert fails, nothing counted.
    monkeypatch.setattr(services, "username_check", lambda **kwargs: None)
    with pytest.raises(IntegrityError):
        user_signup(username="taken", password=PASSWORD, ip_address="192.0.2.2", now=DAY)
    monkeypatch.undo()
    user_signup(username="fresh", password=PASSWORD, ip_address="192.0.2.2", now=DAY)


def _sign_up(client: Client, username: str, address: str = "198.51.100.20", **headers: str):
    data = {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    return client.post(reverse("accounts:signup"), data, REMOTE_ADDR=address, **headers)


def test_the_sign_up_page_answers_429_over_the_limit_and_creates_nothing(settings) -> None:
    settings.SIGNUP_GRANT = 100_000
    _economy(signups_per_address_per_day=2)
    for index in range(2):
        assert _sign_up(Client(), f"burst{index}").status_code == 302
    mint = system_balance(AccountKind.MINT)

    response = _sign_up(Client(), "burst2", HTTP_ACCEPT_LANGUAGE="en")

    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 24 * 3600
    body = response.content.decode()
    assert "2 accounts have already been created from your network address today" in body
    assert not User.objects.filter(username="burst2").exists()
    assert system_balance(AccountKind.MINT) == mint == -200_000
    zh = _sign_up(Client(), "burst3", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert zh.status_code == 429 and "你的网络地址今天已创建" in zh.content.decode()
    assert _sign_up(Client(), "elsewhere", address="198.51.100.21").status_code == 302


def test_the_sign_up_page_announces_the_configured_grant() -> None:
    _economy(signup_grant=4_321)

    body = Client().get("/accounts/signup/", HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert "New players receive 4,321 coins" in body


# The daily bonus.


def test_the_daily_bonus_is_credited_once_per_utc_day(make_player: MakePlayer) -> None:
    player = make_player(100)
    mint = system_balance(AccountKind.MINT)

    posted = wallet_daily_bonus_claim(user=player, now=DAY)

    assert posted.kind == TransactionKind.DAILY_BONUS
    assert posted.idempotency_key == f"daily_bonus:user:{player.pk}:2026-06-01"
    assert posted.reference == f"user:{player.pk}"
    assert balance_of(player) == 2_100
    assert system_balance(AccountKind.MINT) == mint - 2_000
    refusal = _refused(
        "already_claimed", wallet_daily_bonus_claim, user=player, now=DAY + timedelta(hours=13)
    )
    assert "00:00 UTC" in refusal.message
    status = daily_bonus_status(user=player, now=DAY)
    assert (status.claimable, status.code) == (False, "already_claimed")
    assert status.next_claim_at == datetime(2026, 6, 2, tzinfo=UTC)
    # The next UTC day.
    wallet_daily_bonus_claim(user=player, now=datetime(2026, 6, 2, 0, 0, 1, tzinfo=UTC))
    assert balance_of(player) == 4_100
    assert ledger_audit().ok


def test_a_daily_bonus_of_zero_is_off_and_bots_claim_nothing(make_player: MakePlayer) -> None:
    player, bot = make_player(0), make_player(0)
    User.objects.filter(pk=bot.pk).update(is_bot=True)
    bot.refresh_from_db()

    _refused("bot", wallet_daily_bonus_claim, user=bot)
    _refused("bot", wallet_relief_claim, user=bot)
    _economy(daily_bonus=0, relief_amount=0)
    _refused("daily_bonus_off", wallet_daily_bonus_claim, user=player)
    _refused("relief_off", wallet_relief_claim, user=player)
    assert daily_bonus_status(user=player).code == "daily_bonus_off"


@requires_postgresql
@pytest.mark.django_db(transaction=True)
def test_racing_claims_credit_one_bonus_and_one_relief_per_allowance(
    make_player: MakePlayer,
) -> None:
    _economy(relief_per_day=2, relief_below=10**6)
    player = make_player(0)
    threads = 8
    start = threading.Barrier(threads)
    outcomes: list[str] = []
    lock = threading.Lock()

    def race(claim) -> None:  # type: ignore[no-untyped-def]
        try:
            start.wait()
            try:
                claim(user=player)
                outcome = "ok"
            except ClaimRefused as refusal:
                outcome = refusal.code
            with lock:
                outcomes.append(outcome)
        finally:
            connection.close()

    for claim in (wallet_daily_bonus_claim, wallet_relief_claim):
        outcomes.clear()
        workers = [threading.Thread(target=race, args=(claim,)) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(30)
        if claim is wallet_daily_bonus_claim:
            assert sorted(outcomes) == ["already_claimed"] * 7 + ["ok"]
        else:
            assert sorted(outcomes) == ["ok"] * 2 + ["relief_limit"] * 6

    kinds = Transaction.objects.filter(entries__account__user=player).values_list("kind", flat=True)
    assert sorted(kinds) == ["daily_bonus", "relief", "relief"]
    assert balance_of(player) == 2_000 + 2 * 10_000
    assert ledger_audit().ok


# Relief.


def test_relief_is_for_the_broke_a_few_times_a_day(make_player: MakePlayer) -> None:
    rich, broke = make_player(5_000), make_player(4_999)

    refusal = _refused("not_broke", wallet_relief_claim, user=rich, now=DAY)
    assert "fewer than 5,000 coins; you hold 5,000" in refusal.message

    first = wallet_relief_claim(user=broke, now=DAY)
    assert first.kind == TransactionKind.RELIEF
    assert first.idempotency_key == f"relief:user:{broke.pk}:2026-06-01:1"
    assert balance_of(broke) == 14_999
    # Back below the threshold: a second relief the same day, then no third.
    wallet_transfer(source=broke, destination=rich, amount=14_000, idempotency_key="lost")
    second = wallet_relief_claim(user=broke, now=DAY + timedelta(hours=1))
    assert second.idempotency_key.endswith(":2")
    wallet_transfer(source=broke, destination=rich, amount=10_000, idempotency_key="lost again")
    refusal = _refused("relief_limit", wallet_relief_claim, user=broke, now=DAY)
    assert "2 times today" in refusal.message
    status = relief_status(user=broke, now=DAY)
    assert (status.claimable, status.claimed_today, status.per_day) == (False, 2, 2)
    assert status.next_claim_at == next_utc_midnight(DAY)
    wallet_relief_claim(user=broke, now=DAY + timedelta(days=1))
    assert ledger_audit().ok


def test_relief_cannot_be_claimed_during_a_round(make_player: MakePlayer) -> None:
    from games.live import store as table_store
    from games.models import Round, RoundPlayer
    from lobby.services import room_create
    from tests.games.table_helpers import fast_rules

    broke = make_player(0)
    owner = make_player(1_000_000)
    room = room_create(owner=owner, name="Round", base_score=10, seats=2, rules=fast_rules())
    table = table_store.table_for_room(room=room)
    round_ = Round.objects.create(table=table, number=1, config={}, commitment="c", started_at=DAY)
    RoundPlayer.objects.create(round=round_, user=broke, position=1, cards="")

    refusal = _refused("in_round", wallet_relief_claim, user=broke)
    assert "once the round is settled" in refusal.message

    Round.objects.filter(pk=round_.pk).update(settled_at=DAY)
    wallet_relief_claim(user=broke)


# The profile page's buttons.


def test_the_profile_offers_the_claims_and_the_buttons_claim_them(
    client: Client, make_player: MakePlayer
) -> None:
    player = make_player(100)
    client.force_login(player)

    page = client.get(reverse("accounts:profile"), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'data-claim="daily-bonus"' in page and 'data-claim="relief"' in page
    assert "Daily bonus: 2,000 coins, once a day (UTC)." in page
    assert "up to 2 times a day (UTC)" in page
    assert "csrfmiddlewaretoken" in page

    response = client.post(reverse("accounts:claim_daily_bonus"), HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 302 and response["Location"] == reverse("accounts:profile")
    page = client.get(response["Location"], HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "You received your daily bonus of 2,000 coins." in page
    assert "You have already claimed today&#x27;s bonus" in page  # the disabled button's reason

    again = client.post(reverse("accounts:claim_daily_bonus"), HTTP_ACCEPT_LANGUAGE="zh-hans")
    page = client.get(again["Location"], HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "你今天已经领取过每日奖励" in page
    client.post(reverse("accounts:claim_relief"), HTTP_ACCEPT_LANGUAGE="zh-hans")
    page = client.get(reverse("accounts:profile"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert (
        "你领取了 10,000 金币的救济金" in page
    )  # zh-hans groups thousands too (shisanshui/formats)
    assert balance_of(player) == 12_100


def test_the_buttons_need_a_post_a_login_and_the_csrf_token(make_player: MakePlayer) -> None:
    player = make_player(0)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(player)

    assert browser.get(reverse("accounts:claim_daily_bonus")).status_code == 405
    assert browser.post(reverse("accounts:claim_daily_bonus")).status_code == 403
    assert browser.post(reverse("accounts:claim_relief")).status_code == 403
    anonymous = Client().post(reverse("accounts:claim_relief"))
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert balance_of(player) == 0


def _rate(monkeypatch: pytest.MonkeyPatch, scope: str, rate: str) -> None:
    """Set one throttle rate (the throttles read the rates once, at import)."""
    rates = {**SimpleRateThrottle.THROTTLE_RATES, scope: rate}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)


def test_the_buttons_are_rate_limited_per_user(
    client: Client, make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _rate(monkeypatch, "wallet_relief", "2/min")
    player = make_player(10**6)
    client.force_login(player)
    for _ in range(2):
        assert client.post(reverse("accounts:claim_relief")).status_code == 302

    response = client.post(reverse("accounts:claim_relief"), HTTP_ACCEPT_LANGUAGE="en")

    assert response.status_code == 429 and int(response["Retry-After"]) >= 1
    assert "Too many requests: try again in" in response.content.decode()


# The API.


def test_the_api_tells_and_claims(make_player: MakePlayer) -> None:
    player = make_player(0)
    api = APIClient()
    api.force_authenticate(player)

    status = api.get("/api/wallet/daily-bonus/").json()
    assert status == {
        "amount": 2_000,
        "claimable": True,
        "code": None,
        "message": "",
        "next_claim_at": None,
    }
    claimed = api.post("/api/wallet/daily-bonus/")
    assert claimed.status_code == 201
    posted = Transaction.objects.get(kind=TransactionKind.DAILY_BONUS)
    assert claimed.json() == {"transaction_id": posted.pk, "amount": 2_000, "balance": 2_000}
    refused = api.post("/api/wallet/daily-bonus/", HTTP_ACCEPT_LANGUAGE="en")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "already_claimed"
    assert "already claimed today's bonus" in refused.json()["error"]["message"]
    assert api.get("/api/wallet/daily-bonus/").json()["next_claim_at"] is not None

    relief = api.get("/api/wallet/relief/").json()
    assert relief["claimable"] and (relief["below"], relief["per_day"]) == (5_000, 2)
    assert api.post("/api/wallet/relief/").json()["balance"] == 12_000
    refused = api.post("/api/wallet/relief/").json()
    assert refused["error"]["code"] == "not_broke"
    assert api.get("/api/wallet/relief/").json()["claimed_today"] == 1


def test_the_api_needs_a_user_and_throttles_claims(
    make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert APIClient().post("/api/wallet/daily-bonus/").status_code in (401, 403)
    assert APIClient().get("/api/wallet/relief/").status_code in (401, 403)
    _rate(monkeypatch, "wallet_daily_bonus", "3/min")
    api = APIClient()
    api.force_authenticate(make_player(0))
    codes = [api.post("/api/wallet/daily-bonus/").status_code for _ in range(4)]

    assert codes == [201, 409, 409, 429]
    throttled = api.post("/api/wallet/daily-bonus/")
    assert throttled.json()["error"]["code"] == "rate_limited" and "Retry-After" in throttled
    # Reading does not spend the claims' budget.
    assert api.get("/api/wallet/daily-bonus/").status_code == 200


def test_the_schema_documents_the_claims(client: Client, make_player: MakePlayer) -> None:
    import yaml

    client.force_login(make_player(0))
    paths = yaml.safe_load(client.get("/api/schema/").content)["paths"]

    for path in ("/api/wallet/daily-bonus/", "/api/wallet/relief/"):
        assert set(paths[path]) == {"get", "post"}
        assert {"201", "409", "429"} <= set(paths[path]["post"]["responses"])
