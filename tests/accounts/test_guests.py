"""Guests (accounts.services.guest_create, guest_convert, guest_remove): the guest grant
through the mint's budget, the per-address sign-up limit shared with sign-ups, no grant
claimed, no transfer, signing up on the same row, and idle guests removed by the beat task
with their coins back in the mint (the ledger balanced throughout)."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts import economy
from accounts.errors import ClaimRefused, InvalidEntries, SignupRefused
from accounts.models import (
    GUEST_GRANT_REASON,
    Account,
    AccountKind,
    MintDay,
    MintKind,
    SignupQuota,
    Transaction,
    TransactionKind,
    User,
)
from accounts.selectors import ledger_audit, wallet_balance, wallet_entries
from accounts.services import (
    GUEST_NAME_PREFIX,
    REMOVED_GUEST_PREFIX,
    economy_settings_get_or_create,
    guest_convert,
    guest_create,
    guest_remove,
    guests_idle,
    guests_idle_remove,
    user_signup,
    wallet_daily_bonus_claim,
    wallet_relief_claim,
    wallet_transfer,
)
from accounts.tasks import remove_idle_guests
from tests.accounts.conftest import MakePlayer

pytestmark = pytest.mark.django_db

ADDRESS = "198.51.100.7"
PASSWORD = "Correct-horse-42"


def _economy(**values: Any) -> None:
    stored = economy_settings_get_or_create()
    for name, value in values.items():
        setattr(stored, name, value)
    stored.save()


def _minted(kind: str) -> int:
    return sum(MintDay.objects.filter(kind=kind).values_list("minted", flat=True))


def _mint_balance() -> int:
    mint = Account.objects.filter(kind=AccountKind.MINT).first()
    return 0 if mint is None else mint.balance


def test_a_guest_has_a_name_an_unusable_password_and_the_guest_grant_from_its_budget() -> None:
    _economy(guest_grant=2_000)

    guest = guest_create(address=ADDRESS)

    assert guest.is_guest and guest.is_active
    assert guest.username.startswith(GUEST_NAME_PREFIX) and len(guest.username) == 12
    assert not guest.has_usable_password()
    assert guest.signup_address == ADDRESS
    assert wallet_balance(user=guest) == 2_000
    grant = Transaction.objects.get(idempotency_key=f"guest-grant:user:{guest.pk}")
    assert grant.kind == TransactionKind.GRANT and grant.reason == GUEST_GRANT_REASON
    assert _minted(MintKind.GUEST) == 2_000
    assert _minted(MintKind.SIGNUP) == 0
    assert SignupQuota.objects.get(address=ADDRESS).count == 1
    assert ledger_audit().ok


def test_two_guests_get_two_names() -> None:
    names = {guest_create(address=f"198.51.100.{n}").username for n in range(5)}

    assert len(names) == 5


def test_guests_and_sign_ups_share_the_address_limit_and_a_refusal_writes_nothing() -> None:
    _economy(signups_per_address_per_day=2)
    user_signup(username="first", password=PASSWORD, ip_address=ADDRESS)
    guest_create(address=ADDRESS)
    users, transactions = User.objects.count(), Transaction.objects.count()
    minted = _minted(MintKind.GUEST)

    with pytest.raises(SignupRefused) as refused:
        guest_create(address=ADDRESS)
    assert refused.value.code == "signup_limit"
    with pytest.raises(SignupRefused):
        user_signup(username="third", password=PASSWORD, ip_address=ADDRESS)

    assert User.objects.count() == users and Transaction.objects.count() == transactions
    assert _minted(MintKind.GUEST) == minted
    assert SignupQuota.objects.get(address=ADDRESS).count == 2
    # An IPv6 client's whole /64 is one address.
    _economy(signups_per_address_per_day=1)
    guest_create(address="2001:db8::1")
    with pytest.raises(SignupRefused):
        guest_create(address="2001:db8::ffff:2")


def test_a_guest_minting_loop_from_one_address_stops_at_the_limit() -> None:
    _economy(signups_per_address_per_day=5, guest_grant=2_000)
    made = 0
    for _attempt in range(50):
        try:
            guest_create(address=ADDRESS)
        except SignupRefused:
            continue
        made += 1

    assert made == 5
    assert _minted(MintKind.GUEST) == 5 * 2_000
    assert ledger_audit().ok


def test_past_the_guest_mint_ceiling_no_guest_is_created() -> None:
    _economy(guest_grant=2_000, mint_ceiling_guest=4_000, signups_per_address_per_day=0)
    guest_create(address="198.51.100.1")
    guest_create(address="198.51.100.2")
    users, quotas = User.objects.count(), list(SignupQuota.objects.values_list("count"))

    with pytest.raises(SignupRefused) as refused:
        guest_create(address="198.51.100.3")

    assert refused.value.code == "mint_ceiling"
    assert "guest" in refused.value.message
    assert User.objects.count() == users
    assert list(SignupQuota.objects.values_list("count")) == quotas
    assert _minted(MintKind.GUEST) == 4_000
    # Sign-ups have a budget of their own: the guests spent none of it.
    user_signup(username="stillfine", password=PASSWORD, ip_address="198.51.100.4")


def test_a_guest_claims_no_daily_bonus_and_no_relief() -> None:
    _economy(guest_grant=2_000, relief_below=5_000)
    guest = guest_create(address=ADDRESS)
    transactions = Transaction.objects.count()

    with pytest.raises(ClaimRefused) as bonus:
        wallet_daily_bonus_claim(user=guest)
    with pytest.raises(ClaimRefused) as relief:
        wallet_relief_claim(user=guest)

    assert bonus.value.code == "guest" and relief.value.code == "guest"
    assert "sign up" in bonus.value.message.lower()
    assert Transaction.objects.count() == transactions
    assert not economy.daily_bonus_status(user=guest).claimable
    assert economy.relief_status(user=guest).code == "guest"


def test_no_coins_are_transferred_to_or_from_a_guest(make_player: MakePlayer) -> None:
    guest = guest_create(address=ADDRESS)
    player = make_player(coins=5_000)
    transactions = Transaction.objects.count()

    for source, destination in ((guest, player), (player, guest)):
        with pytest.raises(InvalidEntries):
            wallet_transfer(source=source, destination=destination, amount=100, idempotency_key="x")

    assert Transaction.objects.count() == transactions
    assert wallet_balance(user=guest) == 2_000 and wallet_balance(user=player) == 5_000


# Signing up.


def test_a_guest_who_signs_up_keeps_its_row_name_coins_and_entries(settings: Any) -> None:
    settings.SIGNUP_GRANT = 10_000
    _economy(guest_grant=2_000)
    guest = guest_create(address=ADDRESS)
    pk, name = guest.pk, guest.username
    entries_before = [entry.pk for entry in wallet_entries(user=guest)]

    user = guest_convert(user=guest, username=name, password=PASSWORD, email="g@example.com")

    assert user.pk == pk and user.username == name
    assert not user.is_guest and user.email == "g@example.com"
    assert user.check_password(PASSWORD)
    # The rest of the sign-up grant, from the sign-up budget: 2,000 + 8,000 = one grant.
    assert wallet_balance(user=user) == 10_000
    assert _minted(MintKind.SIGNUP) == 8_000 and _minted(MintKind.GUEST) == 2_000
    assert [entry.pk for entry in wallet_entries(user=user)][1:] == entries_before
    # No second sign-up from the address's quota.
    assert SignupQuota.objects.get(address=ADDRESS).count == 1
    assert ledger_audit().ok


def test_a_guest_may_choose_a_new_name_but_not_a_look_alike(make_player: MakePlayer) -> None:
    make_player(username="alice")
    guest = guest_create(address=ADDRESS)

    with pytest.raises(SignupRefused) as refused:
        guest_convert(user=guest, username="ALICE", password=PASSWORD)
    assert refused.value.code == "name_taken"
    guest.refresh_from_db()
    assert guest.is_guest and guest.username.startswith(GUEST_NAME_PREFIX)

    assert guest_convert(user=guest, username="newname", password=PASSWORD).username == "newname"


def test_signing_up_twice_or_an_account_that_is_no_guest_is_refused(
    make_player: MakePlayer, settings: Any
) -> None:
    settings.SIGNUP_GRANT = 10_000
    guest = guest_create(address=ADDRESS)
    guest_convert(user=guest, username="once", password=PASSWORD)
    minted = _minted(MintKind.SIGNUP)

    for user in (guest, make_player()):
        with pytest.raises(SignupRefused) as refused:
            guest_convert(user=user, username="twice", password=PASSWORD)
        assert refused.value.code == "not_a_guest"

    assert _minted(MintKind.SIGNUP) == minted
    assert wallet_balance(user=guest) == 10_000


def test_a_guest_to_sign_up_cycle_mints_one_sign_up_grant_per_address_slot(
    settings: Any,
) -> None:
    settings.SIGNUP_GRANT = 10_000
    _economy(signups_per_address_per_day=1, guest_grant=2_000)
    guest = guest_create(address=ADDRESS)
    guest_convert(user=guest, username="cycler", password=PASSWORD)

    with pytest.raises(SignupRefused):
        guest_create(address=ADDRESS)
    with pytest.raises(SignupRefused):
        user_signup(username="cycler2", password=PASSWORD, ip_address=ADDRESS)

    assert _minted(MintKind.GUEST) + _minted(MintKind.SIGNUP) == 10_000


def test_a_guest_grant_above_the_sign_up_grant_adds_nothing_on_sign_up(settings: Any) -> None:
    settings.SIGNUP_GRANT = 1_000
    _economy(guest_grant=2_000)
    guest = guest_create(address=ADDRESS)

    guest_convert(user=guest, username="rich", password=PASSWORD)

    assert wallet_balance(user=guest) == 2_000 and _minted(MintKind.SIGNUP) == 0


def test_past_the_sign_up_ceiling_the_guest_stays_a_guest(settings: Any) -> None:
    settings.SIGNUP_GRANT = 10_000
    _economy(guest_grant=2_000, mint_ceiling_signup=5_000)
    guest = guest_create(address=ADDRESS)

    with pytest.raises(SignupRefused) as refused:
        guest_convert(user=guest, username="later", password=PASSWORD)

    assert refused.value.code == "mint_ceiling"
    guest.refresh_from_db()
    assert guest.is_guest and not guest.has_usable_password()
    assert wallet_balance(user=guest) == 2_000


# Idle guests.


def _later(days: int) -> Any:
    return timezone.now() + timedelta(days=days)


def test_an_idle_guest_is_deactivated_anonymised_and_its_coins_go_back_to_the_mint(
    settings: Any,
) -> None:
    settings.GUEST_IDLE_DAYS = 7
    guest = guest_create(address=ADDRESS)
    mint_before = _mint_balance()

    assert list(guests_idle(now=_later(6))) == []
    assert guest_remove(user=guest, now=_later(6)) is False
    assert guest_remove(user=guest, now=_later(8)) is True

    guest.refresh_from_db()
    assert not guest.is_active and guest.is_guest and guest.guest_removed_at is not None
    assert guest.username == f"{REMOVED_GUEST_PREFIX}{guest.pk}"
    assert guest.signup_address == "" and not guest.has_usable_password()
    assert wallet_balance(user=guest) == 0
    assert _mint_balance() == mint_before + 2_000
    reclaim = Transaction.objects.get(kind=TransactionKind.GUEST_RECLAIM)
    assert reclaim.idempotency_key == f"guest-reclaim:user:{guest.pk}"
    # The guest grant stays in the ledger: nothing was deleted.
    assert Transaction.objects.filter(idempotency_key=f"guest-grant:user:{guest.pk}").exists()
    assert ledger_audit().ok
    # Again: nothing more happens.
    assert guest_remove(user=guest, now=_later(9)) is False
    assert guests_idle_remove(now=_later(9)) == 0


def test_only_idle_guests_are_removed(make_player: MakePlayer, settings: Any) -> None:
    settings.GUEST_IDLE_DAYS = 7
    idle = guest_create(address="198.51.100.1")
    seen = guest_create(address="198.51.100.2")
    User.objects.filter(pk=seen.pk).update(last_login=_later(5))
    converted = guest_create(address="198.51.100.3")
    guest_convert(user=converted, username="converted", password=PASSWORD)
    player = make_player()

    assert guests_idle_remove(now=_later(8)) == 1

    assert not User.objects.get(pk=idle.pk).is_active
    for kept in (seen, converted, player):
        assert User.objects.get(pk=kept.pk).is_active
    assert ledger_audit().ok


def test_a_guest_in_an_unsettled_round_is_left_for_the_next_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    guest = guest_create(address=ADDRESS)
    monkeypatch.setattr(economy, "_round_checks", [lambda user: True])

    assert guests_idle_remove(now=_later(30)) == 0
    assert User.objects.get(pk=guest.pk).is_active

    monkeypatch.setattr(economy, "_round_checks", [])
    assert guests_idle_remove(now=_later(30)) == 1


def test_the_beat_task_removes_idle_guests(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    settings.GUEST_IDLE_DAYS = 7
    guest = guest_create(address=ADDRESS)
    assert "remove-idle-guests" in settings.CELERY_BEAT_SCHEDULE
    assert settings.CELERY_BEAT_SCHEDULE["remove-idle-guests"]["task"] == remove_idle_guests.name
    assert remove_idle_guests.apply().get() == 0
    later = _later(8)
    monkeypatch.setattr(timezone, "now", lambda: later)

    assert remove_idle_guests.apply().get() == 1

    assert not User.objects.get(pk=guest.pk).is_active
    assert ledger_audit().ok
