"""Separation of powers over the economy: only economy administrators (and superusers) propose
a change of what the mint pays or of a protection, another one approves it before it applies,
every value has a hard bound, and every grant names the settings version it was paid under."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse

from accounts.errors import EconomyChangeRefused
from accounts.groups import ECONOMY_ADMIN, RULES_ADMIN
from accounts.models import (
    ECONOMY_BOUNDS,
    EconomyChange,
    EconomyChangeStatus,
    EconomySettings,
    Transaction,
    TransactionKind,
    User,
)
from accounts.services import (
    economy_change_approve,
    economy_change_propose,
    economy_settings_get_or_create,
    user_signup,
    wallet_admin_adjust,
    wallet_daily_bonus_claim,
)
from tests.accounts.conftest import MakePlayer
from tests.accounts.helpers import balance_of, ledger_counts

pytestmark = pytest.mark.django_db

SETTINGS_URL = reverse("admin:accounts_economysettings_change", args=[1])
CHANGES_URL = reverse("admin:accounts_economychange_changelist")
ATTACK = 900_000_000_000_000
NOON = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _staff(username: str, group: str | None = None, **extra: object) -> User:
    user = User.objects.create_user(username=username, password="x", is_staff=True, **extra)
    if group is not None:
        user.groups.add(Group.objects.get(name=group))
    return user


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _form(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "signup_grant": "",
        "daily_bonus": 2_000,
        "relief_amount": 10_000,
        "relief_below": 5_000,
        "relief_per_day": 2,
        "signups_per_address_per_day": 5,
        "collusion_min_rounds": 20,
        "collusion_days": 7,
        "collusion_min_share_percent": 80,
        "collusion_min_flow": 20_000,
        "table_fee_percent": 0,
        "mint_ceiling_signup": 100_000_000,
        "mint_ceiling_daily_bonus": 20_000_000,
        "mint_ceiling_relief": 20_000_000,
        "mint_ceiling_bot_funding": 5_000_000,
        "guest_grant": 2_000,
        "mint_ceiling_guest": 10_000_000,
    }
    data.update(changes)
    return data


def _stored() -> tuple[object, ...]:
    economy = economy_settings_get_or_create()
    return tuple(
        getattr(economy, name)
        for name in ("daily_bonus", "signup_grant", "signups_per_address_per_day", "version")
    ) + (economy.collusion_min_rounds, economy.collusion_min_share_percent)


# Who may change the economy.


@pytest.mark.parametrize(
    "changes",
    [
        {"daily_bonus": ATTACK},
        {"daily_bonus": 3_000},
        {"signups_per_address_per_day": 0},
        {"collusion_min_rounds": 1_000, "collusion_min_share_percent": 100},
    ],
)
def test_a_rules_admin_cannot_raise_a_grant_nor_switch_off_a_protection(
    changes: dict[str, object], make_player: MakePlayer
) -> None:
    """The attack: a rules admin saves a huge daily bonus (or lifts the sign-up cap, or
    loosens the collusion report) and claims the bonus."""
    rules_admin = _staff("rulesmith", RULES_ADMIN)
    client = _client(rules_admin)
    before = _stored()

    response = client.post(SETTINGS_URL, _form(**changes))

    assert response.status_code == 403
    assert _stored() == before and not EconomyChange.objects.exists()
    # Nor through the service.
    with pytest.raises(EconomyChangeRefused) as refused:
        economy_change_propose(user=rules_admin, values=changes)
    assert refused.value.code == "not_permitted"
    assert not EconomyChange.objects.exists()
    player = make_player(coins=100_000)
    wallet_daily_bonus_claim(user=player, now=NOON)
    assert balance_of(player) == 102_000


def test_the_form_refuses_with_a_clear_error_whoever_lacks_the_economy_permission() -> None:
    """Someone given only `change_economysettings` (as `rules_admin` once had) sees the form,
    and a crafted post of a money field is refused with the reason; nothing changes."""
    editor = _staff("editor")
    editor.user_permissions.add(
        *Group.objects.get(name=ECONOMY_ADMIN).permissions.filter(
            codename__in=["view_economysettings", "change_economysettings"]
        )
    )
    before = _stored()

    response = _client(editor).post(
        SETTINGS_URL, _form(daily_bonus=ATTACK), HTTP_ACCEPT_LANGUAGE="en"
    )

    assert response.status_code == 200
    assert "needs the economy administrator permission" in response.content.decode()
    assert _stored() == before and not EconomyChange.objects.exists()


def test_an_economy_admin_is_refused_by_the_bound() -> None:
    economist = _staff("economist", ECONOMY_ADMIN)
    before = _stored()

    response = _client(economist).post(
        SETTINGS_URL, _form(daily_bonus=ATTACK), HTTP_ACCEPT_LANGUAGE="en"
    )

    assert response.status_code == 200
    assert "At most 100000." in response.content.decode()
    assert _stored() == before and not EconomyChange.objects.exists()
    with pytest.raises(EconomyChangeRefused) as refused:
        economy_change_propose(user=economist, values={"daily_bonus": ATTACK})
    assert refused.value.code == "invalid" and "daily_bonus" in refused.value.message
    assert not EconomyChange.objects.exists()


def test_an_economy_admin_proposes_and_another_approves(make_player: MakePlayer) -> None:
    proposer = _staff("economist", ECONOMY_ADMIN)
    approver = _staff("treasurer", ECONOMY_ADMIN)
    player = make_player(coins=100_000)
    economy_settings_get_or_create()

    client = _client(proposer)
    response = client.post(SETTINGS_URL, _form(daily_bonus=3_000))

    assert response.status_code == 302 and response["Location"] == SETTINGS_URL
    page = client.get(SETTINGS_URL, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Proposed as economy change #" in page and "changed successfully" not in page
    change = EconomyChange.objects.get()
    assert change.status == EconomyChangeStatus.PENDING
    assert change.values == {"daily_bonus": 3_000} and change.proposed_by == proposer
    # Pending: the settings and what a claim pays have not changed.
    assert economy_settings_get_or_create().daily_bonus == 2_000
    bonus = wallet_daily_bonus_claim(user=player, now=NOON)
    assert balance_of(player) == 102_000 and bonus.cause == "economy_settings:v1"

    # The proposer cannot approve it, not even through the admin action.
    action = {"action": "economy_changes_approve", "_selected_action": [change.pk]}
    _client(proposer).post(CHANGES_URL, action)
    change.refresh_from_db()
    assert change.status == EconomyChangeStatus.PENDING
    assert economy_settings_get_or_create().daily_bonus == 2_000

    _client(approver).post(CHANGES_URL, action)

    change.refresh_from_db()
    economy = economy_settings_get_or_create()
    assert change.status == EconomyChangeStatus.APPLIED and change.approved_by == approver
    assert (economy.daily_bonus, economy.version, change.applied_version) == (3_000, 2, 2)
    assert economy.history.latest().history_user == approver
    tomorrow = wallet_daily_bonus_claim(user=player, now=NOON.replace(day=2))
    assert balance_of(player) == 105_000
    assert tomorrow.cause == "economy_settings:v2"


def test_a_rules_admin_cannot_approve_a_pending_change() -> None:
    change = economy_change_propose(
        user=_staff("economist", ECONOMY_ADMIN), values={"signup_grant": 5_000}
    )
    rules_admin = _staff("rulesmith", RULES_ADMIN)

    action = {"action": "economy_changes_approve", "_selected_action": [change.pk]}
    assert _client(rules_admin).post(CHANGES_URL, action).status_code == 403
    with pytest.raises(EconomyChangeRefused) as refused:
        economy_change_approve(change=change, approver=rules_admin)

    assert refused.value.code == "not_permitted"
    change.refresh_from_db()
    assert change.status == EconomyChangeStatus.PENDING
    assert economy_settings_get_or_create().signup_grant is None


@pytest.mark.parametrize("group", [RULES_ADMIN, None])
def test_an_old_version_of_the_settings_is_shown_and_never_saved(group: str | None) -> None:
    """simple-history saves a form posted to an old version's page for anyone who may view
    it (its revert setting only hides the button): the page is read-only for everyone."""
    economy = economy_settings_get_or_create()
    economy.save()
    version_url = reverse(
        "admin:accounts_economysettings_simple_history",
        args=[economy.pk, economy.history.latest().history_id],
    )
    client = _client(_staff("viewer", group, is_superuser=group is None))
    before = _stored()

    assert client.get(version_url).status_code == 200
    assert client.post(version_url, _form(daily_bonus=ATTACK)).status_code == 403
    assert client.post(version_url, _form(daily_bonus=3_000)).status_code == 403
    assert _stored() == before and not EconomyChange.objects.exists()


def test_a_superuser_needs_a_second_approver_too() -> None:
    chief = _staff("chief", is_superuser=True)
    change = economy_change_propose(user=chief, values={"signups_per_address_per_day": 0})

    with pytest.raises(EconomyChangeRefused) as refused:
        economy_change_approve(change=change, approver=chief)

    assert refused.value.code == "own_change"
    assert economy_settings_get_or_create().signups_per_address_per_day == 5
    economy_change_approve(change=change, approver=_staff("deputy", ECONOMY_ADMIN))
    assert economy_settings_get_or_create().signups_per_address_per_day == 0
    # Applied once: a second approval is refused.
    with pytest.raises(EconomyChangeRefused) as again:
        economy_change_approve(change=change, approver=_staff("third", ECONOMY_ADMIN))
    assert again.value.code == "not_pending"


@pytest.mark.parametrize(
    ("values", "code"),
    [
        ({"daily_bonus": 2_000}, "no_change"),
        ({"version": 99}, "unknown_field"),
        ({"relief_per_day": ECONOMY_BOUNDS["relief_per_day"] + 1}, "invalid"),
        ({"relief_amount": -1}, "invalid"),
    ],
)
def test_bad_proposals_are_refused_and_store_nothing(values: dict, code: str) -> None:
    with pytest.raises(EconomyChangeRefused) as refused:
        economy_change_propose(user=_staff("economist", ECONOMY_ADMIN), values=values)

    assert refused.value.code == code
    assert not EconomyChange.objects.exists()


def test_the_database_refuses_self_approval() -> None:
    economist = _staff("economist", ECONOMY_ADMIN)
    change = economy_change_propose(user=economist, values={"daily_bonus": 1_000})

    with pytest.raises(IntegrityError), transaction.atomic():
        EconomyChange.objects.filter(pk=change.pk).update(approved_by=economist)


# The bounds.


@pytest.mark.parametrize(("name", "bound"), sorted(ECONOMY_BOUNDS.items()))
def test_every_economy_value_has_a_hard_bound(name: str, bound: int) -> None:
    EconomySettings(pk=1, **{name: bound}).full_clean()
    with pytest.raises(ValidationError) as refused:
        EconomySettings(pk=1, **{name: bound + 1}).full_clean()
    assert name in refused.value.message_dict
    # The database holds the bound too, even for a write that skips the model's checks.
    economy_settings_get_or_create()
    with pytest.raises(IntegrityError), transaction.atomic():
        EconomySettings.objects.filter(pk=1).update(**{name: bound + 1})


# The ledger names a cause or an author.


def test_grants_name_the_settings_version_and_adjustments_their_author() -> None:
    newcomer = user_signup(username="newcomer", password="a-long-password-1")
    grant = Transaction.objects.get(kind=TransactionKind.GRANT)
    assert grant.cause == "economy_settings:v1" and grant.created_by is None

    staff = _staff("helpdesk")
    adjustment = wallet_admin_adjust(
        user=newcomer, amount=5, reason="Goodwill", created_by=staff, idempotency_key="adj:1"
    )
    assert adjustment.created_by == staff


def test_refused_requests_move_no_coins(make_player: MakePlayer) -> None:
    make_player(coins=10)
    before = ledger_counts()
    rules_admin = _staff("rulesmith", RULES_ADMIN)

    _client(rules_admin).post(SETTINGS_URL, _form(daily_bonus=ATTACK))

    assert ledger_counts() == before


def test_a_proposal_keeps_its_reason_for_the_approver() -> None:
    economy_settings_get_or_create()
    proposer = _client(_staff("treasurer", ECONOMY_ADMIN))
    response = proposer.post(SETTINGS_URL, _form(daily_bonus=3_000, change_reason="Holiday week"))
    assert response.status_code == 302
    change = EconomyChange.objects.get()
    assert change.values == {"daily_bonus": 3_000}  # the reason is not a setting
    assert change.reason == "Holiday week"
    approver = _client(_staff("auditor", ECONOMY_ADMIN))
    assert "Holiday week" in approver.get(CHANGES_URL).content.decode()
