"""The ledger services: posting, idempotency, refusals, reversals, sign-up."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.errors import (
    AlreadyReversed,
    IdempotencyConflict,
    InsufficientFunds,
    InvalidAmount,
    InvalidEntries,
    InvalidTransaction,
    LedgerError,
    MissingReason,
    NotReversible,
    UnknownAccount,
)
from accounts.ledger import MAX_AMOUNT, account_system_get_or_create, ledger_post
from accounts.models import Account, AccountKind, Entry, Transaction, TransactionKind, User
from accounts.selectors import ledger_audit
from accounts.services import (
    ledger_reverse,
    user_signup,
    wallet_admin_adjust,
    wallet_get_or_create,
    wallet_grant,
    wallet_penalize,
    wallet_transfer,
)
from accounts.signals import transaction_posted
from tests.accounts.conftest import MakePlayer
from tests.accounts.helpers import (
    balance_of,
    fire_deferred_checks,
    ledger_counts,
    requires_postgresql,
    system_balance,
)

pytestmark = pytest.mark.django_db


# Posting.


def test_a_settlement_moves_each_players_net_amount_in_one_transaction(
    make_player: MakePlayer,
) -> None:
    a, b, c, d = (make_player(1000) for _ in range(4))
    wallets = {user: wallet_get_or_create(user=user) for user in (a, b, c, d)}

    posted = ledger_post(
        kind=TransactionKind.SETTLEMENT,
        entries={wallets[a]: 300, wallets[b]: -200, wallets[c]: -150, wallets[d].pk: 50},
        idempotency_key="settle:round:1",
        reference="round:1",
    )
    fire_deferred_checks()

    assert [balance_of(u) for u in (a, b, c, d)] == [1300, 800, 850, 1050]
    entries = {e.account.user: (e.amount, e.balance_after) for e in posted.entries.all()}
    assert entries == {a: (300, 1300), b: (-200, 800), c: (-150, 850), d: (50, 1050)}
    assert posted.kind == "settlement" and posted.reference == "round:1"
    assert ledger_audit().ok


def test_an_escape_penalty_goes_to_the_house(make_player: MakePlayer) -> None:
    runaway = make_player(1000)

    posted = wallet_penalize(
        user=runaway, amount=400, idempotency_key="escape:round:7", reference="round:7"
    )

    assert posted.kind == TransactionKind.ESCAPE_PENALTY
    assert balance_of(runaway) == 600
    assert system_balance(AccountKind.HOUSE) == 400


def test_a_grant_comes_from_the_mint_which_goes_negative(make_player: MakePlayer) -> None:
    mint_before = system_balance(AccountKind.MINT)
    player = make_player(0)

    wallet_grant(user=player, amount=250, idempotency_key="bonus:1", reason="Welcome back")

    assert balance_of(player) == 250
    assert system_balance(AccountKind.MINT) == mint_before - 250


def test_the_posting_service_takes_six_queries_and_a_replay_one(
    make_player: MakePlayer, django_assert_num_queries
) -> None:
    a, b = make_player(1000), make_player(1000)
    entries = {wallet_get_or_create(user=a): -10, wallet_get_or_create(user=b): 10}

    # Look up the key; savepoint; lock the accounts; insert the transaction; insert the
    # entries (the trigger moves the balances); release the savepoint.
    with django_assert_num_queries(6):
        ledger_post(kind="settlement", entries=entries, idempotency_key="q:1")
    with django_assert_num_queries(1):
        ledger_post(kind="settlement", entries=entries, idempotency_key="q:1")


def test_a_fresh_posting_in_the_callers_transaction_takes_three_queries(
    make_player: MakePlayer, django_assert_num_queries
) -> None:
    a, b = make_player(1000), make_player(1000)
    entries = {wallet_get_or_create(user=a): -10, wallet_get_or_create(user=b): 10}

    # No look-up of the key and no savepoint: the settlement's lock makes its key new.
    with django_assert_num_queries(3):
        ledger_post(
            kind="settlement", entries=entries, idempotency_key="fresh:1", fresh_in_caller=True
        )
    assert (balance_of(a), balance_of(b)) == (990, 1010)
    assert ledger_audit().ok


def test_a_fresh_posting_refused_writes_nothing(make_player: MakePlayer) -> None:
    a, b = make_player(5), make_player(0)
    entries = {wallet_get_or_create(user=a): -10, wallet_get_or_create(user=b): 10}

    _refused(  # which also checks that nothing was written
        InsufficientFunds,
        lambda: ledger_post(
            kind="settlement", entries=entries, idempotency_key="fresh:2", fresh_in_caller=True
        ),
    )
    assert (balance_of(a), balance_of(b)) == (5, 0)


@pytest.mark.django_db(transaction=True)
def test_a_fresh_posting_needs_the_callers_transaction_and_a_new_key(
    make_player: MakePlayer,
) -> None:
    a, b = make_player(1000), make_player(1000)
    entries = {wallet_get_or_create(user=a): -10, wallet_get_or_create(user=b): 10}

    # Outside a transaction there is no unit to roll back: refused, nothing written.
    _refused(
        InvalidTransaction,
        lambda: ledger_post(
            kind="settlement", entries=entries, idempotency_key="fresh:3", fresh_in_caller=True
        ),
    )

    ledger_post(kind="settlement", entries=entries, idempotency_key="fresh:3")
    # A key posted before breaks the caller's guarantee: the caller's whole transaction fails
    # and rolls back (here: the transfer in it too), and no coin moves twice.
    with pytest.raises(IntegrityError), transaction.atomic():
        wallet_transfer(source=b, destination=a, amount=1, idempotency_key="fresh:inner")
        ledger_post(
            kind="settlement", entries=entries, idempotency_key="fresh:3", fresh_in_caller=True
        )
    assert (balance_of(a), balance_of(b)) == (990, 1010)
    assert not Transaction.objects.filter(idempotency_key="fresh:inner").exists()
    assert ledger_audit().ok


@requires_postgresql
def test_accounts_are_locked_in_primary_key_order(make_player: MakePlayer) -> None:
    players = [make_player(1000) for _ in range(3)]
    wallets = [wallet_get_or_create(user=p) for p in players]
    entries = {wallets[2]: -2, wallets[0]: 1, wallets[1]: 1}

    with CaptureQueriesContext(connection) as queries:
        ledger_post(kind="settlement", entries=entries, idempotency_key="order:1")

    lock = next(q["sql"] for q in queries if "FOR UPDATE" in q["sql"])
    assert "ORDER BY" in lock and '"accounts_account"."id" ASC' in lock


def test_the_posted_signal_is_sent_once_on_commit_and_not_for_replays(
    make_player: MakePlayer, django_capture_on_commit_callbacks
) -> None:
    a, b = make_player(1000), make_player(1000)
    received: list[Transaction] = []

    def receiver(sender: object, transaction: Transaction, **kwargs: object) -> None:
        received.append(transaction)

    transaction_posted.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            first = wallet_transfer(source=a, destination=b, amount=5, idempotency_key="s:1")
            wallet_transfer(source=a, destination=b, amount=5, idempotency_key="s:1")
            with pytest.raises(InsufficientFunds):
                wallet_transfer(source=a, destination=b, amount=10**6, idempotency_key="s:2")
    finally:
        transaction_posted.disconnect(receiver)

    assert received == [first]


# Idempotency.


def test_posting_the_same_key_twice_returns_the_first_transaction_and_moves_nothing(
    make_player: MakePlayer,
) -> None:
    a, b = make_player(1000), make_player(1000)

    first = wallet_transfer(source=a, destination=b, amount=100, idempotency_key="k:1")
    counts = ledger_counts()
    again = wallet_transfer(source=a, destination=b, amount=100, idempotency_key="k:1")

    assert again.pk == first.pk
    assert ledger_counts() == counts
    assert (balance_of(a), balance_of(b)) == (900, 1100)


@pytest.mark.parametrize(
    "change",
    [
        {"amount": 101},
        {"reference": "round:2"},
        {"reason": "different"},
        {"swap": True},
    ],
)
def test_the_same_key_with_different_content_is_refused(
    make_player: MakePlayer, change: dict[str, object]
) -> None:
    a, b = make_player(1000), make_player(1000)
    wallet_transfer(source=a, destination=b, amount=100, idempotency_key="k:1", reference="round:1")
    counts = ledger_counts()
    source, destination = (b, a) if change.pop("swap", False) else (a, b)
    request = {"amount": 100, "reference": "round:1", "reason": "", **change}

    with pytest.raises(IdempotencyConflict):
        wallet_transfer(
            source=source,
            destination=destination,
            idempotency_key="k:1",
            **request,  # type: ignore[arg-type]
        )
    assert ledger_counts() == counts


def test_a_retry_that_lost_the_race_to_the_locks_is_a_replay_not_a_failure(
    make_player: MakePlayer,
) -> None:
    """Two identical requests both miss the key, then queue for the locks; the first drains
    the wallet. The second, under lock, must answer with the first, not InsufficientFunds."""
    from accounts.ledger import _content_hash, _ledger_write

    a, b = make_player(100), make_player(0)
    wallets = {wallet_get_or_create(user=a).pk: -100, wallet_get_or_create(user=b).pk: 100}
    first = ledger_post(kind="settlement", entries=wallets, idempotency_key="race")
    content_hash = _content_hash(
        kind="settlement", amounts=wallets, reference="", reason="", reverses_id=None
    )
    counts = ledger_counts()

    second = _ledger_write(
        kind="settlement",
        amounts=wallets,
        idempotency_key="race",
        content_hash=content_hash,
        reference="",
        reason="",
        created_by=None,
        reverses=None,
    )

    assert second.pk == first.pk and ledger_counts() == counts


def test_a_key_is_unique_across_kinds(make_player: MakePlayer) -> None:
    player = make_player(1000)
    wallet_grant(user=player, amount=10, idempotency_key="shared")

    with pytest.raises(IdempotencyConflict):
        wallet_penalize(user=player, amount=10, idempotency_key="shared")


# Refusals: a clear LedgerError, and nothing written.


def _refused(error: type[LedgerError], call: object) -> LedgerError:
    counts = ledger_counts()
    with pytest.raises(error) as raised:
        call()  # type: ignore[operator]
    assert ledger_counts() == counts, "a refused request wrote something"
    assert isinstance(raised.value, LedgerError) and raised.value.message
    return raised.value


def test_an_unknown_account_is_refused(make_player: MakePlayer) -> None:
    wallet = wallet_get_or_create(user=make_player(1000))
    missing = Account.objects.order_by("-pk").first().pk + 1000  # type: ignore[union-attr]

    error = _refused(
        UnknownAccount,
        lambda: ledger_post(
            kind="settlement", entries={wallet: -5, missing: 5}, idempotency_key="x"
        ),
    )
    assert str(missing) in error.message


@pytest.mark.parametrize("amount", [0, -1, -500, 1.5, "10", True, MAX_AMOUNT + 1])
@pytest.mark.parametrize("service", ["grant", "transfer", "penalize"])
def test_a_zero_negative_or_non_integer_amount_is_refused(
    make_player: MakePlayer, service: str, amount: object
) -> None:
    a, b = make_player(1000), make_player(1000)
    calls = {
        "grant": lambda: wallet_grant(user=a, amount=amount, idempotency_key="x"),
        "transfer": lambda: wallet_transfer(
            source=a, destination=b, amount=amount, idempotency_key="x"
        ),
        "penalize": lambda: wallet_penalize(user=a, amount=amount, idempotency_key="x"),
    }
    _refused(InvalidAmount, calls[service])


@pytest.mark.parametrize(
    ("entries", "error"),
    [
        ({}, InvalidEntries),
        ({"a": 0, "b": 0}, InvalidEntries),
        ({"a": -5, "b": 4}, InvalidEntries),
        ({"a": -5, "b": 5, "c": 0}, InvalidEntries),
        ({"a": 5}, InvalidEntries),
        ({"a": -5.0, "b": 5.0}, InvalidEntries),
        ({"a": -(MAX_AMOUNT + 1), "b": MAX_AMOUNT + 1}, InvalidAmount),
    ],
)
def test_malformed_entries_are_refused(
    make_player: MakePlayer, entries: dict[str, int], error: type[LedgerError]
) -> None:
    wallets = {name: wallet_get_or_create(user=make_player(1000)) for name in "abc"}
    _refused(
        error,
        lambda: ledger_post(
            kind="settlement",
            entries={wallets[name]: amount for name, amount in entries.items()},
            idempotency_key="x",
        ),
    )


def test_an_account_named_twice_is_refused(make_player: MakePlayer) -> None:
    a = wallet_get_or_create(user=make_player(1000))
    b = wallet_get_or_create(user=make_player(1000))
    _refused(
        InvalidEntries,
        lambda: ledger_post(kind="settlement", entries={a: -5, a.pk: 3, b: 2}, idempotency_key="x"),
    )


def test_paying_yourself_is_refused(make_player: MakePlayer) -> None:
    a = make_player(1000)
    _refused(
        InvalidEntries,
        lambda: wallet_transfer(source=a, destination=a, amount=1, idempotency_key="x"),
    )


def test_insufficient_funds_are_refused_and_the_wallet_keeps_its_coins(
    make_player: MakePlayer,
) -> None:
    a, b = make_player(100), make_player(100)

    error = _refused(
        InsufficientFunds,
        lambda: wallet_transfer(source=a, destination=b, amount=101, idempotency_key="x"),
    )

    assert "100" in error.message
    assert (balance_of(a), balance_of(b)) == (100, 100)
    # Exactly the whole balance is fine.
    wallet_transfer(source=a, destination=b, amount=100, idempotency_key="y")
    assert balance_of(a) == 0


@pytest.mark.parametrize(
    "request_",
    [
        {"kind": "gift"},
        {"idempotency_key": ""},
        {"idempotency_key": "   "},
        {"idempotency_key": "k" * 201},
        {"reference": "r" * 101},
    ],
)
def test_an_unusable_kind_key_or_reference_is_refused(
    make_player: MakePlayer, request_: dict[str, str]
) -> None:
    a = wallet_get_or_create(user=make_player(1000))
    b = wallet_get_or_create(user=make_player(1000))
    arguments = {"kind": "settlement", "idempotency_key": "x", **request_}
    _refused(
        InvalidTransaction,
        lambda: ledger_post(entries={a: -1, b: 1}, **arguments),  # type: ignore[arg-type]
    )


def test_the_mint_takes_no_part_in_a_settlement(make_player: MakePlayer) -> None:
    mint = account_system_get_or_create(kind=AccountKind.MINT)
    wallet = wallet_get_or_create(user=make_player(0))
    _refused(
        InvalidEntries,
        lambda: ledger_post(
            kind="settlement", entries={mint: -1000, wallet: 1000}, idempotency_key="x"
        ),
    )


def test_only_a_reversal_names_a_transaction_to_reverse(make_player: MakePlayer) -> None:
    a, b = make_player(1000), make_player(1000)
    original = wallet_transfer(source=a, destination=b, amount=1, idempotency_key="t")
    wallets = [wallet_get_or_create(user=u) for u in (a, b)]
    _refused(
        InvalidTransaction,
        lambda: ledger_post(
            kind="settlement",
            entries={wallets[0]: -1, wallets[1]: 1},
            idempotency_key="x",
            reverses=original,
        ),
    )
    _refused(
        InvalidTransaction,
        lambda: ledger_post(
            kind="reversal",
            entries={wallets[0]: 1, wallets[1]: -1},
            idempotency_key="x",
            reason="why",
        ),
    )


# Admin adjustments.


def test_an_admin_adjustment_credits_or_debits_against_the_mint_and_records_who(
    make_player: MakePlayer, admin_user: User
) -> None:
    player = make_player(1000)
    mint_before = system_balance(AccountKind.MINT)

    credit = wallet_admin_adjust(
        user=player, amount=500, reason="Compensation", created_by=admin_user, idempotency_key="a1"
    )
    debit = wallet_admin_adjust(
        user=player, amount=-200, reason="Clawback", created_by=admin_user, idempotency_key="a2"
    )

    assert balance_of(player) == 1300
    assert system_balance(AccountKind.MINT) == mint_before - 300
    assert (credit.kind, credit.reason, credit.created_by) == (
        "admin_adjustment",
        "Compensation",
        admin_user,
    )
    assert debit.created_by == admin_user


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_an_admin_adjustment_without_a_reason_is_refused(
    make_player: MakePlayer, admin_user: User, reason: str | None
) -> None:
    player = make_player(1000)
    _refused(
        MissingReason,
        lambda: wallet_admin_adjust(
            user=player,
            amount=500,
            reason=reason,  # type: ignore[arg-type]
            created_by=admin_user,
            idempotency_key="a",
        ),
    )
    _refused(
        MissingReason,
        lambda: ledger_post(
            kind="admin_adjustment",
            entries={
                account_system_get_or_create(kind=AccountKind.MINT): -5,
                wallet_get_or_create(user=player): 5,
            },
            idempotency_key="b",
            reason=reason or "",
        ),
    )


@pytest.mark.parametrize("amount", [0, 1.5, MAX_AMOUNT + 1])
def test_an_admin_adjustment_of_a_bad_amount_is_refused(
    make_player: MakePlayer, admin_user: User, amount: object
) -> None:
    player = make_player(1000)
    _refused(
        InvalidAmount,
        lambda: wallet_admin_adjust(
            user=player,
            amount=amount,  # type: ignore[arg-type]
            reason="r",
            created_by=admin_user,
            idempotency_key="a",
        ),
    )


def test_an_admin_debit_cannot_take_a_wallet_below_zero(
    make_player: MakePlayer, admin_user: User
) -> None:
    player = make_player(100)
    _refused(
        InsufficientFunds,
        lambda: wallet_admin_adjust(
            user=player, amount=-101, reason="r", created_by=admin_user, idempotency_key="a"
        ),
    )


# Reversals.


def test_a_reversal_posts_the_negated_entries_and_refers_to_the_original(
    make_player: MakePlayer, admin_user: User
) -> None:
    a, b, c = make_player(1000), make_player(1000), make_player(1000)
    wallets = [wallet_get_or_create(user=u) for u in (a, b, c)]
    original = ledger_post(
        kind="settlement",
        entries={wallets[0]: 60, wallets[1]: -20, wallets[2]: -40},
        idempotency_key="settle:round:9",
        reference="round:9",
    )

    reversal = ledger_reverse(original=original, reason="Misdeal", created_by=admin_user)
    fire_deferred_checks()

    assert [balance_of(u) for u in (a, b, c)] == [1000, 1000, 1000]
    assert reversal.kind == "reversal" and reversal.reverses == original
    assert reversal.reference == "round:9" and reversal.created_by == admin_user
    assert sorted(reversal.entries.values_list("amount", flat=True)) == [-60, 20, 40]
    assert original.reversed_by == reversal
    assert ledger_audit().ok


def test_a_transaction_is_reversed_only_once(make_player: MakePlayer) -> None:
    a, b = make_player(1000), make_player(1000)
    original = wallet_transfer(source=a, destination=b, amount=100, idempotency_key="t")
    reversal = ledger_reverse(original=original, reason="Misdeal")

    # Asking again is a replay of the same reversal ...
    assert ledger_reverse(original=original, reason="Misdeal").pk == reversal.pk
    # ... but a second, different reversal is refused.
    _refused(
        AlreadyReversed,
        lambda: ledger_reverse(original=original, reason="Misdeal", idempotency_key="again"),
    )
    _refused(AlreadyReversed, lambda: ledger_reverse(original=original, reason="Other"))
    assert (balance_of(a), balance_of(b)) == (1000, 1000)


def test_a_reversal_is_not_itself_reversed(make_player: MakePlayer) -> None:
    a, b = make_player(1000), make_player(1000)
    original = wallet_transfer(source=a, destination=b, amount=100, idempotency_key="t")
    reversal = ledger_reverse(original=original, reason="Misdeal")

    _refused(NotReversible, lambda: ledger_reverse(original=reversal, reason="Undo"))


def test_a_reversal_needs_a_reason(make_player: MakePlayer) -> None:
    a, b = make_player(1000), make_player(1000)
    original = wallet_transfer(source=a, destination=b, amount=100, idempotency_key="t")

    _refused(MissingReason, lambda: ledger_reverse(original=original, reason=" "))


def test_a_reversal_cannot_take_coins_the_player_has_spent(make_player: MakePlayer) -> None:
    a, b, c = make_player(1000), make_player(0), make_player(0)
    original = wallet_transfer(source=a, destination=b, amount=500, idempotency_key="t1")
    wallet_transfer(source=b, destination=c, amount=400, idempotency_key="t2")

    _refused(InsufficientFunds, lambda: ledger_reverse(original=original, reason="Fraud"))


# Sign-up.


def test_sign_up_creates_a_wallet_holding_the_configured_grant(settings) -> None:
    settings.SIGNUP_GRANT = 12_345

    user = user_signup(username="newbie", password="a-long-password-1", email="n@example.com")

    assert user.check_password("a-long-password-1") and user.email == "n@example.com"
    assert balance_of(user) == 12_345
    grant = Transaction.objects.get(kind="grant", reference=f"user:{user.pk}")
    assert grant.idempotency_key == f"signup-grant:user:{user.pk}"


def test_sign_up_with_a_zero_grant_creates_an_empty_wallet(settings) -> None:
    settings.SIGNUP_GRANT = 0

    user = user_signup(username="newbie", password="a-long-password-1")

    assert balance_of(user) == 0
    assert not Entry.objects.filter(account__user=user).exists()


def test_the_sign_up_grant_defaults_to_100000_and_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib

    from shisanshui.settings import base

    try:
        monkeypatch.delenv("SIGNUP_GRANT", raising=False)
        assert importlib.reload(base).SIGNUP_GRANT == 100_000
        monkeypatch.setenv("SIGNUP_GRANT", "5_000")
        assert importlib.reload(base).SIGNUP_GRANT == 5_000
        for unusable in ("lots", "-1"):
            monkeypatch.setenv("SIGNUP_GRANT", unusable)
            with pytest.raises(ImproperlyConfigured):
                importlib.reload(base)
    finally:
        monkeypatch.undo()
        importlib.reload(base)


def test_system_accounts_are_created_once() -> None:
    mint = account_system_get_or_create(kind=AccountKind.MINT)

    assert account_system_get_or_create(kind=AccountKind.MINT).pk == mint.pk
    assert Account.objects.filter(kind=AccountKind.MINT).count() == 1
    with pytest.raises(InvalidTransaction):
        account_system_get_or_create(kind=AccountKind.WALLET)
