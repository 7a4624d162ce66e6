"""The admin of the economy: the settings (economy administrators propose, support views),
the sign-ups by address, and the collusion report that support reviews."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from accounts.groups import RULES_ADMIN, SUPPORT
from accounts.models import CollusionFlag, CollusionStatus, EconomySettings, SignupQuota, User
from accounts.services import user_signup, wallet_get_or_create
from tests.accounts.conftest import MakePlayer

pytestmark = pytest.mark.django_db

SETTINGS_URL = reverse("admin:accounts_economysettings_change", args=[1])


def _staff_client(username: str, group: str) -> tuple[Client, User]:
    user = User.objects.create_user(username=username, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    return client, user


@pytest.fixture
def support() -> tuple[Client, User]:
    return _staff_client("helpdesk", SUPPORT)


@pytest.fixture
def rules_admin() -> tuple[Client, User]:
    return _staff_client("rulesmith", RULES_ADMIN)


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
    }
    data.update(changes)
    return data


# The settings.


def test_the_list_opens_the_one_row_of_settings(admin_client: Client) -> None:
    response = admin_client.get(reverse("admin:accounts_economysettings_changelist"))

    assert response.status_code == 302 and response["Location"] == SETTINGS_URL
    assert EconomySettings.objects.get().signup_grant is None
    page = admin_client.get(SETTINGS_URL, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Empty: the SIGNUP_GRANT setting (now" in page
    assert "Collusion report" in page and "Relief for broke players" in page
    assert reverse("admin:accounts_economysettings_add") not in page
    assert admin_client.get(reverse("admin:accounts_economysettings_add")).status_code == 403
    delete = reverse("admin:accounts_economysettings_delete", args=[1])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert EconomySettings.objects.exists()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"daily_bonus": -5}, "Enter 0 or more coins; a negative amount is not allowed."),
        ({"signup_grant": -1}, "Enter 0 or more coins; a negative amount is not allowed."),
        ({"relief_below": 0}, "set the balance below which it may be claimed"),
        ({"collusion_min_share_percent": 150}, "The share is a percentage from 1 to 100."),
        ({"collusion_days": 0}, "At least 1 day."),
        ({"daily_bonus": "lots"}, "Enter a whole number."),
    ],
)
def test_unusable_settings_are_refused_with_a_clear_error(
    admin_client: Client, changes: dict, message: str
) -> None:
    admin_client.get(reverse("admin:accounts_economysettings_changelist"))
    before = EconomySettings.objects.get()

    response = admin_client.post(SETTINGS_URL, _form(**changes), HTTP_ACCEPT_LANGUAGE="en")

    assert response.status_code == 200
    assert message in response.content.decode()
    after = EconomySettings.objects.get()
    assert (after.daily_bonus, after.relief_below, after.collusion_days) == (
        before.daily_bonus,
        before.relief_below,
        before.collusion_days,
    )


def test_support_views_the_settings_but_cannot_change_them(
    support: tuple[Client, User],
) -> None:
    client, _user = support

    assert client.get(reverse("admin:accounts_economysettings_changelist")).status_code == 302
    page = client.get(SETTINGS_URL)
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    assert client.post(SETTINGS_URL, _form(daily_bonus=10**9)).status_code == 403
    assert EconomySettings.objects.get().daily_bonus == 2_000


def test_support_sees_the_sign_ups_by_address_read_only(support: tuple[Client, User]) -> None:
    client, _user = support
    user_signup(username="fromnat", password="a-long-password-1", ip_address="192.0.2.77")
    quota = SignupQuota.objects.get()

    listing = client.get(reverse("admin:accounts_signupquota_changelist"))
    assert listing.status_code == 200 and "192.0.2.77" in listing.content.decode()
    change = reverse("admin:accounts_signupquota_change", args=[quota.pk])
    assert client.post(change, {"count": 0}).status_code == 403
    assert SignupQuota.objects.get().count == 1


# The collusion report.


def _flag(make_player: MakePlayer) -> CollusionFlag:
    loser, winner = make_player(10, username="dumper"), make_player(10, username="friend")
    at = datetime(2026, 6, 1, tzinfo=UTC)
    return CollusionFlag.objects.create(
        loser=loser,
        winner=winner,
        shared_rounds=25,
        flow=46_250,
        losses=47_000,
        share_percent="98.4",
        first_round_at=at,
        last_round_at=at,
        updated_at=at,
    )


def test_support_lists_a_flag_with_links_to_the_rounds_and_both_ledgers(
    support: tuple[Client, User], make_player: MakePlayer
) -> None:
    client, _user = support
    flag = _flag(make_player)

    listing = client.get(reverse("admin:accounts_collusionflag_changelist"))
    assert listing.status_code == 200
    assert "dumper" in listing.content.decode() and "46250" in listing.content.decode()

    page = client.get(
        reverse("admin:accounts_collusionflag_change", args=[flag.pk]), HTTP_ACCEPT_LANGUAGE="en"
    ).content.decode()
    rounds = reverse("admin:games_round_changelist") + "?player=dumper&amp;q=friend"
    assert rounds in page and "Rounds of dumper with friend" in page
    for player in (flag.loser, flag.winner):
        wallet = wallet_get_or_create(user=player)
        entries = reverse("admin:accounts_entry_changelist") + f"?account__id__exact={wallet.pk}"
        assert entries in page
        statement = client.get(entries)
        assert statement.status_code == 200
        assert statement.context["cl"].result_count == 1  # the test grant
    found = client.get(reverse("admin:games_round_changelist") + "?player=dumper&q=friend")
    assert found.status_code == 200


def test_support_changes_only_the_status_and_the_note(
    support: tuple[Client, User], make_player: MakePlayer
) -> None:
    client, user = support
    flag = _flag(make_player)
    url = reverse("admin:accounts_collusionflag_change", args=[flag.pk])

    response = client.post(
        url,
        {
            "status": CollusionStatus.REVIEWED,
            "note": "  Same household; wallets frozen.  ",
            "flow": 1,
            "loser": flag.winner.pk,
            "reviewer": flag.loser.pk,
        },
    )

    assert response.status_code == 302
    flag.refresh_from_db()
    assert (flag.status, flag.note) == (CollusionStatus.REVIEWED, "Same household; wallets frozen.")
    assert (flag.reviewer, flag.flow, flag.loser.username) == (user, 46_250, "dumper")
    assert flag.reviewed_at is not None
    bad = client.post(url, {"status": "forgiven", "note": ""})
    assert bad.status_code == 200 and CollusionFlag.objects.get().status == "reviewed"
    delete = reverse("admin:accounts_collusionflag_delete", args=[flag.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert client.get(reverse("admin:accounts_collusionflag_add")).status_code == 403
    assert CollusionFlag.objects.count() == 1


def test_rules_admin_does_not_see_the_collusion_report(
    rules_admin: tuple[Client, User], make_player: MakePlayer
) -> None:
    client, _user = rules_admin
    flag = _flag(make_player)

    assert client.get(reverse("admin:accounts_collusionflag_changelist")).status_code == 403
    url = reverse("admin:accounts_collusionflag_change", args=[flag.pk])
    assert client.post(url, {"status": "dismissed", "note": ""}).status_code == 403
