"""`manage.py ledger_audit`: reconcile every coin; exits with status 1 if anything is off."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from accounts.selectors import ledger_audit


def _ids(ids: list[int]) -> str:
    return ", ".join(map(str, ids))


class Command(BaseCommand):
    help = (
        "Reconcile the coin ledger from its entries: balances sum to zero, every transaction "
        "is balanced, cached balances match their entries, no wallet is negative."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        audit = ledger_audit()
        self.stdout.write(
            f"{audit.accounts} accounts, {audit.transactions} transactions, "
            f"{audit.entries} entries; sum of all balances: {audit.total_balance}"
        )
        problems = []
        if audit.total_balance != 0:
            problems.append(f"the balances sum to {audit.total_balance}, not 0")
        if audit.unbalanced_transactions:
            problems.append(f"unbalanced transactions: {_ids(audit.unbalanced_transactions)}")
        if audit.mismatched_accounts:
            problems.append(
                f"cached balance differs from the entries: {_ids(audit.mismatched_accounts)}"
            )
        if audit.negative_wallets:
            problems.append(f"negative wallets: {_ids(audit.negative_wallets)}")
        if problems:
            raise CommandError("The ledger does not reconcile: " + "; ".join(problems))
        self.stdout.write(self.style.SUCCESS("The ledger reconciles."))
