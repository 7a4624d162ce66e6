"""Reads of the accounts app: balances, statements and the ledger audit. Nothing here writes."""

from dataclasses import dataclass

from django.db.models import Count, F, OuterRef, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from accounts.models import Account, AccountKind, Entry, Transaction, User


def wallet_for_user(*, user: User) -> Account | None:
    """The user's wallet, or None if they have never had one."""
    return Account.objects.filter(user=user, kind=AccountKind.WALLET).first()


def wallet_balance(*, user: User) -> int:
    """The user's balance in coins (0 without a wallet)."""
    balance = (
        Account.objects.filter(user=user, kind=AccountKind.WALLET)
        .values_list("balance", flat=True)
        .first()
    )
    return balance or 0


def wallet_entries(*, user: User) -> QuerySet[Entry]:
    """The user's ledger entries, newest first, each with its transaction."""
    return (
        Entry.objects.filter(account__user=user, account__kind=AccountKind.WALLET)
        .select_related("transaction")
        .order_by("-id")
    )


@dataclass(frozen=True)
class LedgerAudit:
    """What a full reconciliation of the ledger found; `ok` when nothing is wrong."""

    accounts: int
    transactions: int
    entries: int
    total_balance: int
    unbalanced_transactions: list[int]
    mismatched_accounts: list[int]
    negative_wallets: list[int]

    @property
    def ok(self) -> bool:
        return (
            self.total_balance == 0
            and not self.unbalanced_transactions
            and not self.mismatched_accounts
            and not self.negative_wallets
        )


def ledger_audit() -> LedgerAudit:
    """Reconcile the whole ledger from its entries, trusting no cached value.

    Checks that the balances of all accounts sum to zero (no coin created or destroyed), that
    every transaction has entries summing to zero, that every cached balance equals the sum of
    its account's entries, and that no player wallet is negative. Reads every entry: for
    support and tests, not for a request path.
    """
    entry_sums = (
        Entry.objects.filter(account=OuterRef("pk"))
        .order_by()
        .values("account")
        .annotate(total=Sum("amount"))
        .values("total")
    )
    mismatched = (
        Account.objects.annotate(from_entries=Coalesce(Subquery(entry_sums), Value(0)))
        .exclude(balance=F("from_entries"))
        .values_list("pk", flat=True)
    )
    unbalanced = (
        Transaction.objects.annotate(total=Sum("entries__amount"), count=Count("entries"))
        .exclude(count__gt=0, total=0)
        .values_list("pk", flat=True)
    )
    return LedgerAudit(
        accounts=Account.objects.count(),
        transactions=Transaction.objects.count(),
        entries=Entry.objects.count(),
        total_balance=Account.objects.aggregate(total=Coalesce(Sum("balance"), 0))["total"],
        unbalanced_transactions=sorted(unbalanced),
        mismatched_accounts=sorted(mismatched),
        negative_wallets=sorted(
            Account.objects.filter(kind=AccountKind.WALLET, balance__lt=0).values_list(
                "pk", flat=True
            )
        ),
    )
