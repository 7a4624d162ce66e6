"""The ledger's posting service: `ledger_post` is the only code that moves coins.

How a post runs (check -> lock -> write -> notify on commit):
1. validate the request in Python, without touching the database;
2. if its idempotency key was used before, return that transaction (same content) or refuse it
   (different content) — a replay moves nothing;
3. lock the accounts taking part with SELECT ... FOR UPDATE, always in primary-key order, so
   that concurrent posts queue up instead of deadlocking; check the wallets can pay;
4. insert the transaction and its entries; a database trigger applies each entry to its
   account's cached balance, and the database checks the result (migration 0003);
5. send `transaction_posted` once the database transaction commits.
"""

import functools
import hashlib
import json
import logging
from collections.abc import Mapping

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from accounts.errors import (
    AlreadyReversed,
    IdempotencyConflict,
    InsufficientFunds,
    InvalidAmount,
    InvalidEntries,
    InvalidTransaction,
    LedgerError,
    MissingReason,
    UnknownAccount,
)
from accounts.models import (
    KINDS_NEEDING_A_REASON,
    Account,
    AccountKind,
    Entry,
    Transaction,
    TransactionKind,
    User,
)
from accounts.signals import transaction_posted

logger = logging.getLogger(__name__)


# Far below BIGINT's 9.2e18, so no sum of balances can overflow.
MAX_AMOUNT = 10**15


# Transactions between players and the house: the mint, which creates coins, takes no part.
KINDS_WITHOUT_THE_MINT = (
    TransactionKind.SETTLEMENT,
    TransactionKind.ESCAPE_PENALTY,
    TransactionKind.BOT_FUNDING,
    TransactionKind.BOT_SWEEP,
    TransactionKind.TABLE_FEE,
)


_KEY_MAX_LENGTH = Transaction._meta.get_field("idempotency_key").max_length or 0


_REFERENCE_MAX_LENGTH = Transaction._meta.get_field("reference").max_length or 0


def ledger_post(
    *,
    kind: str,
    entries: Mapping[Account | int, int],
    idempotency_key: str,
    reference: str = "",
    reason: str = "",
    created_by: User | None = None,
    cause: str = "",
    reverses: Transaction | None = None,
    fresh_in_caller: bool = False,
) -> Transaction:
    """Post one balanced transaction and return it: the only way coins move.

    `entries` maps each account taking part (an Account or its id, at most once) to a non-zero
    whole number of coins, credits positive and debits negative, summing to zero. Posting an
    `idempotency_key` again with the same content returns the first transaction and moves
    nothing; with different content it raises IdempotencyConflict. A player wallet never goes
    below zero (InsufficientFunds). `reverses` is set only by `ledger_reverse`. `cause` names
    what the platform paid it under when no person did (not part of the content hash).

    Atomic: it runs in its own transaction, or in a savepoint of the caller's. With
    ``fresh_in_caller`` the caller's transaction is the unit instead, and the caller guarantees
    under its own lock that the key was never posted (a round settled once, under the round's
    lock): no look-up of the key first and no savepoint, two round trips fewer on the table's
    hot path. A refusal then raises before anything is written; a duplicate key (a broken
    guarantee) raises IntegrityError, and the caller's whole transaction rolls back.
    """
    kind = _checked_kind(kind)
    amounts = _checked_entries(entries)
    _check_text(idempotency_key=idempotency_key, reference=reference)
    if kind in KINDS_NEEDING_A_REASON and not reason.strip():
        raise MissingReason(_("A reason is required for this kind of transaction."))
    if (kind == TransactionKind.REVERSAL) != (reverses is not None):
        raise InvalidTransaction(_("Only a reversal refers to a transaction it reverses."))
    content_hash = _content_hash(
        kind=kind,
        amounts=amounts,
        reference=reference,
        reason=reason,
        reverses_id=reverses.pk if reverses is not None else None,
    )

    write = functools.partial(
        _ledger_write,
        kind=kind,
        amounts=amounts,
        idempotency_key=idempotency_key,
        content_hash=content_hash,
        reference=reference,
        reason=reason,
        created_by=created_by,
        cause=cause,
        reverses=reverses,
    )
    if fresh_in_caller:
        if not transaction.get_connection().in_atomic_block:
            raise InvalidTransaction("fresh_in_caller needs the caller's transaction")
        return write()
    replayed = _replayed(
        idempotency_key=idempotency_key, content_hash=content_hash, reverses=reverses
    )
    if replayed is not None:
        return replayed
    try:
        with transaction.atomic():
            return write()
    except IntegrityError:
        # A concurrent post with the same key committed between our look-up and our insert.
        replayed = _replayed(
            idempotency_key=idempotency_key, content_hash=content_hash, reverses=reverses
        )
        if replayed is None:
            raise
        return replayed


def _ledger_write(
    *,
    kind: str,
    amounts: dict[int, int],
    idempotency_key: str,
    content_hash: str,
    reference: str,
    reason: str,
    created_by: User | None,
    reverses: Transaction | None,
    cause: str = "",
) -> Transaction:
    # Check, under lock.
    accounts = list(Account.objects.select_for_update().filter(pk__in=amounts).order_by("pk"))
    problem = _problem_under_lock(kind=kind, amounts=amounts, accounts=accounts, reverses=reverses)
    if problem is not None:
        # Waiting for the locks, we may have let an identical request (a retry) go first;
        # then this one is its replay, not a failure.
        replayed = _replayed(
            idempotency_key=idempotency_key, content_hash=content_hash, reverses=reverses
        )
        if replayed is not None:
            return replayed
        raise problem

    # Write. The entry trigger moves each cached balance; these in-memory ones follow suit.
    posted = Transaction.objects.create(
        kind=kind,
        reference=reference,
        reason=reason,
        idempotency_key=idempotency_key,
        content_hash=content_hash,
        reverses=reverses,
        created_by=created_by,
        cause=cause,
    )
    new_entries = []
    for account in accounts:
        account.balance += amounts[account.pk]
        new_entries.append(
            Entry(
                transaction=posted,
                account=account,
                amount=amounts[account.pk],
                balance_after=account.balance,
            )
        )
    Entry.objects.bulk_create(new_entries)

    # Notify.
    logger.info(
        "ledger: posted transaction %s (%s, %s) moving %s coins",
        posted.pk,
        kind,
        reference or "-",
        sum(amount for amount in amounts.values() if amount > 0),
    )
    transaction.on_commit(
        lambda: transaction_posted.send(sender=Transaction, transaction=posted),
        robust=True,
    )
    return posted


def _problem_under_lock(
    *,
    kind: str,
    amounts: dict[int, int],
    accounts: list[Account],
    reverses: Transaction | None,
) -> LedgerError | None:
    """Why the locked accounts cannot take this transaction, or None if they can."""
    if len(accounts) != len(amounts):
        missing = sorted(set(amounts) - {account.pk for account in accounts})
        return UnknownAccount(
            _("No such account: %(ids)s.") % {"ids": ", ".join(map(str, missing))}
        )
    if kind in KINDS_WITHOUT_THE_MINT and any(a.kind == AccountKind.MINT for a in accounts):
        return InvalidEntries(_("The mint takes no part in settlements or penalties."))
    if reverses is not None:
        earlier = Transaction.objects.filter(reverses=reverses).first()
        if earlier is not None:
            return AlreadyReversed(
                _("Transaction #%(id)s has already been reversed by #%(reversal)s.")
                % {"id": reverses.pk, "reversal": earlier.pk}
            )
    for account in accounts:
        if account.kind == AccountKind.WALLET and account.balance + amounts[account.pk] < 0:
            return InsufficientFunds(
                _("%(account)s holds %(balance)s coins and cannot pay %(amount)s.")
                % {
                    "account": account,
                    "balance": account.balance,
                    "amount": -amounts[account.pk],
                }
            )
    return None


def _replayed(
    *, idempotency_key: str, content_hash: str, reverses: Transaction | None
) -> Transaction | None:
    """The transaction already posted under this key, or None; refuses different content."""
    try:
        earlier = Transaction.objects.get(idempotency_key=idempotency_key)
    except Transaction.DoesNotExist:
        return None
    if earlier.content_hash != content_hash:
        if reverses is not None and earlier.reverses_id == reverses.pk:
            raise AlreadyReversed(
                _("Transaction #%(id)s has already been reversed by #%(reversal)s.")
                % {"id": reverses.pk, "reversal": earlier.pk}
            )
        raise IdempotencyConflict(
            _(
                "The idempotency key %(key)s was already used by transaction #%(id)s "
                "with different content."
            )
            % {"key": idempotency_key, "id": earlier.pk}
        )
    return earlier


def _checked_kind(kind: str) -> str:
    if kind not in TransactionKind.values:
        raise InvalidTransaction(_("Unknown transaction kind: %(kind)s.") % {"kind": kind})
    return str(kind)


def _checked_entries(entries: Mapping[Account | int, int]) -> dict[int, int]:
    """The entries as {account id: amount}, sorted by id; refuses anything unbalanced."""
    if not entries:
        raise InvalidEntries(_("A transaction needs entries."))
    amounts: dict[int, int] = {}
    for account, amount in entries.items():
        account_id = account.pk if isinstance(account, Account) else account
        if not is_whole(account_id):
            raise UnknownAccount(_("No such account: %(id)s.") % {"id": account_id})
        if not is_whole(amount):
            raise InvalidEntries(
                _("An amount must be a whole number of coins, not %(amount)r.") % {"amount": amount}
            )
        if amount == 0:
            raise InvalidEntries(_("An entry of 0 coins moves nothing."))
        if abs(amount) > MAX_AMOUNT:
            raise InvalidAmount(
                _("An amount cannot exceed %(max)s coins.") % {"max": f"{MAX_AMOUNT:,}"}
            )
        if account_id in amounts:
            raise InvalidEntries(
                _("Account %(id)s appears twice; give each account one entry.") % {"id": account_id}
            )
        amounts[account_id] = amount
    total = sum(amounts.values())
    if total != 0:
        raise InvalidEntries(
            _("The entries sum to %(total)s; they must sum to 0.") % {"total": total}
        )
    return dict(sorted(amounts.items()))


def is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_text(*, idempotency_key: str, reference: str) -> None:
    if not isinstance(idempotency_key, str) or not idempotency_key.strip():
        raise InvalidTransaction(_("An idempotency key is required."))
    if len(idempotency_key) > _KEY_MAX_LENGTH:
        raise InvalidTransaction(
            _("An idempotency key has at most %(n)s characters.") % {"n": _KEY_MAX_LENGTH}
        )
    if len(reference) > _REFERENCE_MAX_LENGTH:
        raise InvalidTransaction(
            _("A reference has at most %(n)s characters.") % {"n": _REFERENCE_MAX_LENGTH}
        )


def _content_hash(
    *, kind: str, amounts: dict[int, int], reference: str, reason: str, reverses_id: int | None
) -> str:
    """SHA-256 of the canonical JSON of what a transaction moves and why (not who asked)."""
    content = {
        "kind": kind,
        "entries": [[account_id, amount] for account_id, amount in sorted(amounts.items())],
        "reference": reference,
        "reason": reason,
        "reverses": reverses_id,
    }
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def account_system_get_or_create(*, kind: str) -> Account:
    """The mint or the house account, created on first use."""
    if kind not in (AccountKind.MINT, AccountKind.HOUSE):
        raise InvalidTransaction(_("%(kind)s is not a system account.") % {"kind": kind})
    account, _created = Account.objects.get_or_create(kind=kind, user=None)
    return account
