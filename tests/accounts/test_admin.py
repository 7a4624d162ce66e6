"""The admin: adjustments and reversals by permitted staff, read-only support, CSV export."""

import csv
import io

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.groups import ECONOMY_ADMIN, RULES_ADMIN, SUPPORT
from accounts.models import Account, AccountKind, Entry, Transaction, TransactionKind, User
from accounts.services import wallet_get_or_create, wallet_transfer
from tests.accounts.conftest import MakePlayer
from tests.accounts.helpers import balance_of, ledger_counts

pytestmark = pytest.mark.django_db


def _staff(username: str, *permissions: str, group: str | None = None) -> User:
    user = User.objects.create_user(username=username, password="x", is_staff=True)
    for permission in permissions:
        app_label, codename = permission.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def support(db: None) -> Client:
    client = Client()
    client.force_login(_staff("helpdesk", group=SUPPORT))
    return client


@pytest.fixture
def cashier(db: None) -> tuple[Client, User]:
    """Staff allowed to adjust wallets and reverse transactions, and to view the ledger."""
    user = _staff(
        "cashier",
        "accounts.adjust_wallet",
        "accounts.reverse_transaction",
        "accounts.view_account",
        "accounts.view_transaction",
    )
    client = Client()
    client.force_login(user)
    return client, user


def _adjust_url(account: Account) -> str:
    return reverse("admin:accounts_account_adjust", args=[account.pk])


# The groups.


def _permissions_of(group_name: str) -> set[str]:
    group = Group.objects.get(name=group_name)
    return {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}


def test_the_groups_exist_with_their_permissions() -> None:
    support = _permissions_of(SUPPORT)
    assert {p for p in support if p.startswith("accounts.")} == {
        "accounts.export_ledger",
        "accounts.view_account",
        "accounts.view_entry",
        "accounts.view_transaction",
        "accounts.view_user",
        # A password reset link goes to the player's own address (test_admin_passwords.py).
        "accounts.send_password_reset",
        "accounts.view_economysettings",
        "accounts.view_signupquota",
        "accounts.view_collusionflag",
        # Reviewing a flag: its status and note only (tests/accounts/test_collusion_admin.py).
        "accounts.change_collusionflag",
        # Freezing a suspect's transfers pending review, with a note, and its history.
        "accounts.freeze_transfers",
        "accounts.view_transferfreeze",
    }
    reads = support - {
        "accounts.export_ledger",
        "accounts.change_collusionflag",
        "accounts.send_password_reset",
        "accounts.freeze_transfers",
    }
    assert all(p.split(".")[1].startswith("view_") for p in reads)
    rules_admin = _permissions_of(RULES_ADMIN)
    assert "games.change_ruleconfiguration" in rules_admin
    # Every economy setting is what the mint pays or a protection: the rules admin only reads them.
    assert {p for p in rules_admin if p.startswith("accounts.")} == {
        "accounts.view_economysettings",
    }
    economy_admin = _permissions_of(ECONOMY_ADMIN)
    assert {"accounts.change_economy_money", "accounts.change_economychange"} <= economy_admin


def test_the_groups_are_restored_after_every_migrate() -> None:
    Group.objects.filter(name__in=[SUPPORT, RULES_ADMIN]).delete()

    call_command("migrate", verbosity=0)

    assert "accounts.export_ledger" in _permissions_of(SUPPORT)
    assert "games.change_ruleconfiguration" in _permissions_of(RULES_ADMIN)


def test_migrate_takes_the_economy_settings_from_the_rules_admin() -> None:
    """A database where `rules_admin` still changes the economy settings loses that power."""
    group = Group.objects.get(name=RULES_ADMIN)
    group.permissions.add(Permission.objects.get(codename="change_economysettings"))
    assert "accounts.change_economysettings" in _permissions_of(RULES_ADMIN)

    call_command("migrate", verbosity=0)

    assert "accounts.change_economysettings" not in _permissions_of(RULES_ADMIN)
    assert "accounts.change_economysettings" in _permissions_of(ECONOMY_ADMIN)


# Adjustments.


def test_a_permitted_staff_member_credits_and_debits_a_wallet_with_a_reason(
    cashier: tuple[Client, User], make_player: MakePlayer
) -> None:
    client, user = cashier
    player = make_player(1000)
    wallet = wallet_get_or_create(user=player)

    page = client.get(reverse("admin:accounts_account_change", args=[wallet.pk]))
    assert _adjust_url(wallet) in page.content.decode()
    form = client.get(_adjust_url(wallet))
    assert form.status_code == 200
    key = form.context["form"].initial["idempotency_key"]

    data = {"direction": "credit", "amount": "250", "reason": "Lost hand", "idempotency_key": key}
    response = client.post(_adjust_url(wallet), data)
    assert response.status_code == 302
    # Submitting the same form again (a double click) posts nothing more.
    client.post(_adjust_url(wallet), data)
    client.post(
        _adjust_url(wallet),
        {"direction": "debit", "amount": "50", "reason": "Typo", "idempotency_key": "k2"},
    )

    assert balance_of(player) == 1200
    adjustments = Transaction.objects.filter(kind=TransactionKind.ADMIN_ADJUSTMENT)
    assert sorted(adjustments.values_list("reason", "created_by__username")) == [
        ("Lost hand", "cashier"),
        ("Typo", "cashier"),
    ]


def test_an_adjustment_without_a_reason_or_beyond_the_balance_is_refused(
    cashier: tuple[Client, User], make_player: MakePlayer
) -> None:
    client, _ = cashier
    wallet = wallet_get_or_create(user=make_player(100))
    counts = ledger_counts()

    no_reason = client.post(
        _adjust_url(wallet),
        {"direction": "credit", "amount": "5", "reason": "  ", "idempotency_key": "k1"},
    )
    overdraft = client.post(
        _adjust_url(wallet),
        {"direction": "debit", "amount": "101", "reason": "r", "idempotency_key": "k2"},
    )

    assert no_reason.status_code == 200 and no_reason.context["form"].errors["reason"]
    assert overdraft.status_code == 200
    assert "cannot pay 101" in overdraft.content.decode()
    assert ledger_counts() == counts


def test_only_wallets_are_adjusted(cashier: tuple[Client, User], make_player: MakePlayer) -> None:
    client, _ = cashier
    make_player(100)
    mint = Account.objects.get(kind=AccountKind.MINT)

    assert client.get(_adjust_url(mint)).status_code == 404


def test_support_cannot_adjust_a_wallet(support: Client, make_player: MakePlayer) -> None:
    wallet = wallet_get_or_create(user=make_player(100))
    counts = ledger_counts()

    page = support.get(reverse("admin:accounts_account_change", args=[wallet.pk]))
    assert page.status_code == 200 and _adjust_url(wallet) not in page.content.decode()
    assert support.get(_adjust_url(wallet)).status_code == 403
    response = support.post(
        _adjust_url(wallet),
        {"direction": "credit", "amount": "5", "reason": "r", "idempotency_key": "k"},
    )

    assert response.status_code == 403
    assert ledger_counts() == counts


# Reversals.


def test_a_permitted_staff_member_reverses_a_transaction_once(
    cashier: tuple[Client, User], make_player: MakePlayer
) -> None:
    client, user = cashier
    a, b = make_player(1000), make_player(1000)
    original = wallet_transfer(source=a, destination=b, amount=300, idempotency_key="t")
    url = reverse("admin:accounts_transaction_reverse", args=[original.pk])

    page = client.get(reverse("admin:accounts_transaction_change", args=[original.pk]))
    assert url in page.content.decode()
    assert client.get(url).status_code == 200
    assert client.post(url, {"reason": ""}).status_code == 200
    response = client.post(url, {"reason": "Misdeal"})

    assert response.status_code == 302
    reversal = Transaction.objects.get(reverses=original)
    assert (reversal.reason, reversal.created_by) == ("Misdeal", user)
    assert (balance_of(a), balance_of(b)) == (1000, 1000)
    page = client.get(reverse("admin:accounts_transaction_change", args=[original.pk]))
    assert url not in page.content.decode()
    again = client.post(url, {"reason": "Again"})
    assert again.status_code == 200 and "already been reversed" in again.content.decode()


def test_support_cannot_reverse(support: Client, make_player: MakePlayer) -> None:
    a, b = make_player(1000), make_player(1000)
    original = wallet_transfer(source=a, destination=b, amount=300, idempotency_key="t")

    response = support.post(
        reverse("admin:accounts_transaction_reverse", args=[original.pk]), {"reason": "r"}
    )

    assert response.status_code == 403
    assert not Transaction.objects.filter(reverses=original).exists()


# Support: view everything, change nothing.


def test_support_views_users_wallets_transactions_and_entries(
    support: Client, make_player: MakePlayer
) -> None:
    a, b = make_player(1000), make_player(1000)
    posted = wallet_transfer(source=a, destination=b, amount=300, idempotency_key="t")
    wallet = wallet_get_or_create(user=a)
    entry = posted.entries.first()
    assert entry is not None

    for url in [
        reverse("admin:index"),
        reverse("admin:accounts_user_changelist"),
        reverse("admin:accounts_user_change", args=[a.pk]),
        reverse("admin:accounts_account_changelist"),
        reverse("admin:accounts_account_change", args=[wallet.pk]),
        reverse("admin:accounts_transaction_changelist"),
        reverse("admin:accounts_transaction_change", args=[posted.pk]),
        reverse("admin:accounts_entry_changelist") + f"?account__id__exact={wallet.pk}",
        reverse("admin:accounts_entry_change", args=[entry.pk]),
    ]:
        response = support.get(url)
        assert response.status_code == 200, url
        assert 'name="_save"' not in response.content.decode(), url


@pytest.mark.parametrize(
    "url_name",
    [
        "admin:accounts_user_add",
        "admin:accounts_account_add",
        "admin:accounts_transaction_add",
        "admin:accounts_entry_add",
    ],
)
def test_support_cannot_add_anything(support: Client, url_name: str) -> None:
    counts = ledger_counts()

    assert support.get(reverse(url_name)).status_code == 403
    assert support.post(reverse(url_name), {}).status_code == 403
    assert ledger_counts() == counts


def test_support_cannot_change_or_delete_anything(support: Client, make_player: MakePlayer) -> None:
    a, b = make_player(1000), make_player(1000)
    posted = wallet_transfer(source=a, destination=b, amount=300, idempotency_key="t")
    wallet = wallet_get_or_create(user=a)
    entry = posted.entries.first()
    assert entry is not None
    counts, user_count = ledger_counts(), User.objects.count()

    objects = [
        ("user", a.pk),
        ("account", wallet.pk),
        ("transaction", posted.pk),
        ("entry", entry.pk),
    ]
    for model, pk in objects:
        change = reverse(f"admin:accounts_{model}_change", args=[pk])
        delete = reverse(f"admin:accounts_{model}_delete", args=[pk])
        assert support.post(change, {"username": "renamed", "amount": "1"}).status_code == 403
        assert support.get(delete).status_code == 403
        assert support.post(delete, {"post": "yes"}).status_code == 403
    bulk_delete = support.post(
        reverse("admin:accounts_user_changelist"),
        {"action": "delete_selected", "_selected_action": [a.pk], "post": "yes"},
    )
    assert bulk_delete.status_code in (200, 302)

    assert ledger_counts() == counts and User.objects.count() == user_count
    a.refresh_from_db()
    assert a.username != "renamed" and balance_of(a) == 700


def test_not_even_a_superuser_can_edit_or_delete_ledger_rows(
    admin_client: Client, make_player: MakePlayer
) -> None:
    a, b = make_player(1000), make_player(1000)
    posted = wallet_transfer(source=a, destination=b, amount=300, idempotency_key="t")
    entry = posted.entries.first()
    assert entry is not None
    counts = ledger_counts()

    for model, pk in [("transaction", posted.pk), ("entry", entry.pk)]:
        change = admin_client.get(reverse(f"admin:accounts_{model}_change", args=[pk]))
        assert change.status_code == 200 and 'name="_save"' not in change.content.decode()
        delete = reverse(f"admin:accounts_{model}_delete", args=[pk])
        assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert admin_client.get(reverse("admin:accounts_entry_add")).status_code == 403
    assert ledger_counts() == counts


# CSV export.


def _export(client: Client, entries: list[Entry]) -> object:
    return client.post(
        reverse("admin:accounts_entry_changelist"),
        {"action": "export_csv", "_selected_action": [entry.pk for entry in entries]},
    )


def test_support_exports_the_selected_entries_as_csv(
    support: Client, make_player: MakePlayer
) -> None:
    a, b = make_player(1000, username="=cmd"), make_player(1000, username="小明")
    posted = wallet_transfer(
        source=a, destination=b, amount=300, idempotency_key="t", reference="round:5"
    )
    entries = list(posted.entries.order_by("id"))

    response = _export(support, entries)

    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="ledger-entries-')
    text = b"".join(response.streaming_content).decode("utf-8")  # type: ignore[attr-defined]
    assert text.startswith("\ufeff")
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    assert [(row["username"], row["amount"], row["balance_after"]) for row in rows] == [
        ("'=cmd", "-300", "700"),
        ("小明", "300", "1300"),
    ]
    assert {row["transaction_id"] for row in rows} == {str(posted.pk)}
    assert {row["kind"] for row in rows} == {"settlement"}
    assert {row["reference"] for row in rows} == {"round:5"}


def test_staff_without_the_export_permission_cannot_export(make_player: MakePlayer) -> None:
    viewer = Client()
    viewer.force_login(_staff("viewer", "accounts.view_entry"))
    a, b = make_player(1000), make_player(1000)
    posted = wallet_transfer(source=a, destination=b, amount=300, idempotency_key="t")

    page = viewer.get(reverse("admin:accounts_entry_changelist"))
    response = _export(viewer, list(posted.entries.all()))

    assert page.status_code == 200 and "export_csv" not in page.content.decode()
    assert response.get("Content-Type", "").startswith("text/html")


def test_the_ledger_lists_take_as_many_queries_for_many_rows_as_for_few(
    admin_client: Client, make_player: MakePlayer
) -> None:
    a, b = make_player(1000), make_player(1000)
    urls = [
        reverse(f"admin:accounts_{model}_changelist")
        for model in ("user", "account", "transaction", "entry")
    ]

    def queries_per_page() -> list[int]:
        counts = []
        for url in urls:
            with CaptureQueriesContext(connection) as queries:
                assert admin_client.get(url).status_code == 200
            counts.append(len(queries))
        return counts

    wallet_transfer(source=a, destination=b, amount=1, idempotency_key="t:0")
    few = queries_per_page()
    for number in range(1, 15):
        wallet_transfer(source=a, destination=b, amount=1, idempotency_key=f"t:{number}")

    assert queries_per_page() == few
