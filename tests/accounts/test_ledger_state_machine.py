"""Random sequences of ledger operations, checked against a model after every step.

Hypothesis drives grants, transfers, multi-party settlements, escape penalties, reversals and
replays of idempotency keys (same and different content) against the real services and
database. After every step: the balances of all accounts sum to zero, every transaction sums
to zero, no wallet is negative, every cached balance equals its entries' sum, and each balance
is what the model predicts. Each example runs in a savepoint that is rolled back afterwards.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction
from django.db.models import Sum
from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)

from accounts.errors import (
    AlreadyReversed,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    NotReversible,
)
from accounts.ledger import account_system_get_or_create, ledger_post
from accounts.models import Account, AccountKind, Transaction, TransactionKind, User
from accounts.selectors import ledger_audit
from accounts.services import (
    ledger_reverse,
    wallet_get_or_create,
    wallet_grant,
    wallet_penalize,
    wallet_transfer,
)
from tests.accounts.helpers import fire_deferred_checks, ledger_counts

PLAYERS = 4
players = st.integers(0, PLAYERS - 1)


@dataclass
class Posted:
    """A transaction the machine posted, and how to ask for it again."""

    transaction_id: int
    kind: str
    deltas: dict[int, int]  # account id -> amount
    service: Callable[..., Transaction]
    arguments: dict[str, Any] = field(default_factory=dict)


class LedgerMachine(RuleBasedStateMachine):
    posted = Bundle("posted")

    def __init__(self) -> None:
        super().__init__()
        self._savepoint = transaction.atomic()
        self._savepoint.__enter__()
        self.users = [
            User.objects.create_user(username=f"machine{i}", password="x") for i in range(PLAYERS)
        ]
        self.wallets = [wallet_get_or_create(user=user).pk for user in self.users]
        self.mint = account_system_get_or_create(kind=AccountKind.MINT).pk
        self.house = account_system_get_or_create(kind=AccountKind.HOUSE).pk
        self.expected = dict(Account.objects.values_list("pk", "balance"))
        # original transaction id -> (its reversal's id, whether it used the default key)
        self.reversals: dict[int, tuple[int, bool]] = {}
        self.steps = 0

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._savepoint.__exit__(None, None, None)

    # Helpers.

    def _key(self, name: str) -> str:
        self.steps += 1
        return f"machine:{name}:{self.steps}"

    def _would_overdraw(self, deltas: dict[int, int]) -> bool:
        return any(
            self.expected[account] + amount < 0
            for account, amount in deltas.items()
            if account in self.wallets
        )

    def _refused(self, error: type[LedgerError], call: Callable[[], object]) -> None:
        counts = ledger_counts()
        try:
            call()
        except error:
            pass
        else:
            raise AssertionError(f"expected {error.__name__}")
        assert ledger_counts() == counts

    def _post(
        self,
        expected_kind: str,
        deltas: dict[int, int],
        service: Callable[..., Transaction],
        /,
        **arguments: Any,
    ) -> Any:
        if self._would_overdraw(deltas):
            self._refused(InsufficientFunds, lambda: service(**arguments))
            return multiple()
        posted = service(**arguments)
        for account, amount in deltas.items():
            self.expected[account] += amount
        assert posted.kind == expected_kind
        assert dict(posted.entries.values_list("account_id", "amount")) == deltas
        return Posted(posted.pk, expected_kind, deltas, service, arguments)

    # Operations.

    @rule(target=posted, player=players, amount=st.integers(1, 5_000))
    def grant(self, player: int, amount: int) -> Any:
        return self._post(
            TransactionKind.GRANT,
            {self.mint: -amount, self.wallets[player]: amount},
            wallet_grant,
            user=self.users[player],
            amount=amount,
            idempotency_key=self._key("grant"),
        )

    @rule(target=posted, payer=players, payee=players, amount=st.integers(1, 3_000))
    def transfer(self, payer: int, payee: int, amount: int) -> Any:
        assume(payer != payee)
        return self._post(
            TransactionKind.SETTLEMENT,
            {self.wallets[payer]: -amount, self.wallets[payee]: amount},
            wallet_transfer,
            source=self.users[payer],
            destination=self.users[payee],
            amount=amount,
            idempotency_key=self._key("transfer"),
        )

    @rule(
        target=posted,
        shares=st.lists(st.integers(-2_000, 2_000), min_size=PLAYERS - 1, max_size=PLAYERS - 1),
        rake=st.integers(0, 50),
    )
    def settle(self, shares: list[int], rake: int) -> Any:
        """A round among all players, net amounts summing to zero, the house taking a rake."""
        amounts = [*shares, -sum(shares) - rake]
        deltas = {
            wallet: amount for wallet, amount in zip(self.wallets, amounts, strict=True) if amount
        }
        if rake:
            deltas[self.house] = rake
        assume(len(deltas) >= 2)
        key = self._key("settle")
        return self._post(
            TransactionKind.SETTLEMENT,
            deltas,
            ledger_post,
            kind=TransactionKind.SETTLEMENT,
            entries=deltas,
            idempotency_key=key,
            reference=f"round:{key}",
        )

    @rule(target=posted, player=players, amount=st.integers(1, 2_000))
    def penalty(self, player: int, amount: int) -> Any:
        return self._post(
            TransactionKind.ESCAPE_PENALTY,
            {self.wallets[player]: -amount, self.house: amount},
            wallet_penalize,
            user=self.users[player],
            amount=amount,
            idempotency_key=self._key("penalty"),
        )

    @rule(target=posted, original=posted, fresh_key=st.booleans())
    def reverse(self, original: Posted, fresh_key: bool) -> Any:
        arguments: dict[str, Any] = {
            "original": Transaction.objects.get(pk=original.transaction_id)
        }
        arguments["reason"] = "machine reversal"
        if fresh_key:
            arguments["idempotency_key"] = self._key("reverse")
        if original.kind == TransactionKind.REVERSAL:
            self._refused(NotReversible, lambda: ledger_reverse(**arguments))
            return multiple()
        if original.transaction_id in self.reversals:
            reversal_id, default_key = self.reversals[original.transaction_id]
            if default_key and not fresh_key:
                # The same request again: a replay of the first reversal.
                counts = ledger_counts()
                assert ledger_reverse(**arguments).pk == reversal_id
                assert ledger_counts() == counts
            else:
                self._refused(AlreadyReversed, lambda: ledger_reverse(**arguments))
            return multiple()
        negated = {account: -amount for account, amount in original.deltas.items()}
        posted = self._post(TransactionKind.REVERSAL, negated, ledger_reverse, **arguments)
        if isinstance(posted, Posted):
            self.reversals[original.transaction_id] = (posted.transaction_id, not fresh_key)
        return posted

    @rule(original=posted)
    def replay(self, original: Posted) -> None:
        counts, balances = ledger_counts(), dict(Account.objects.values_list("pk", "balance"))

        again = original.service(**original.arguments)

        assert again.pk == original.transaction_id
        assert ledger_counts() == counts
        assert dict(Account.objects.values_list("pk", "balance")) == balances

    @rule(original=posted)
    def replay_with_different_content(self, original: Posted) -> None:
        arguments = {**original.arguments, "reason": "something else"}
        # Asking to reverse a transaction again, differently, is refused as already reversed.
        error = (
            AlreadyReversed if original.kind == TransactionKind.REVERSAL else IdempotencyConflict
        )
        self._refused(error, lambda: original.service(**arguments))

    # What must hold after every step.

    @invariant()
    def the_database_agrees(self) -> None:
        fire_deferred_checks()  # PostgreSQL's own checks, as at commit

    @invariant()
    def no_coin_is_created_or_lost(self) -> None:
        assert Account.objects.aggregate(total=Sum("balance"))["total"] in (0, None)
        audit = ledger_audit()
        assert audit.ok, audit

    @invariant()
    def every_balance_is_what_the_model_predicts(self) -> None:
        assert dict(Account.objects.values_list("pk", "balance")) == self.expected
        assert all(self.expected[wallet] >= 0 for wallet in self.wallets)


@pytest.mark.django_db
def test_the_ledger_keeps_its_invariants_under_random_operations() -> None:
    run_state_machine_as_test(
        LedgerMachine,
        settings=settings(
            max_examples=30,
            stateful_step_count=20,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
