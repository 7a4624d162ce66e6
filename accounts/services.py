"""Services of the accounts app: signing up, and the named movements of coins.

The `wallet_*` services (grants, transfers, penalties, adjustments, and the grants players
claim: `wallet_daily_bonus_claim`, `wallet_relief_claim`), `ledger_reverse` and `user_signup`
are thin, named uses of :func:`accounts.ledger.ledger_post`, the only code that moves coins. A
refused request raises an `accounts.errors` `LedgerError` and writes nothing.
"""

import logging
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.forms import PasswordResetForm
from django.core.exceptions import ValidationError
from django.core.mail import EmailMultiAlternatives, send_mail
from django.db import connection, transaction
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.economy import (
    daily_bonus_key,
    daily_bonus_refusal,
    economy_settings,
    in_unsettled_round,
    network_address,
    relief_key_prefix,
    relief_refusal,
    reliefs_claimed,
)
from accounts.errors import (
    EconomyChangeRefused,
    InvalidAmount,
    InvalidEntries,
    MintBudgetExhausted,
    MissingReason,
    NotReversible,
    SignupRefused,
)
from accounts.ledger import MAX_AMOUNT, account_system_get_or_create, is_whole, ledger_post
from accounts.mint import mint_budget_take, mint_refusal_alert, utc_day
from accounts.models import (
    ECONOMY_GUARDED_FIELDS,
    GUEST_GRANT_REASON,
    GUEST_RECLAIM_REASON,
    GUEST_SIGNUP_REASON,
    SIGNUP_GRANT_REASON,
    Account,
    AccountKind,
    EconomyChange,
    EconomyChangeStatus,
    EconomySettings,
    MintKind,
    SignupQuota,
    Transaction,
    TransactionKind,
    User,
)
from accounts.names import has_invisible, name_key

logger = logging.getLogger(__name__)

# Held by superusers and the `economy_admin` group (accounts.groups), not by `rules_admin`.
ECONOMY_MONEY_PERMISSION = "accounts.change_economy_money"


# Accounts.


def wallet_get_or_create(*, user: User) -> Account:
    """The user's wallet, created empty on first use (sign-up creates it at once)."""
    wallet, _created = Account.objects.get_or_create(
        user=user, defaults={"kind": AccountKind.WALLET}
    )
    return wallet


# Named movements. Each is atomic through ledger_post, its only write of coins.


def wallet_grant(
    *,
    user: User,
    amount: int,
    idempotency_key: str,
    reference: str = "",
    reason: str = "",
    created_by: User | None = None,
    cause: str = "",
) -> Transaction:
    """Credit `amount` new coins from the mint to the user's wallet; `cause` names what the
    platform paid it under (`economy_cause`), `created_by` the person who did."""
    _check_positive(amount)
    mint = account_system_get_or_create(kind=AccountKind.MINT)
    wallet = wallet_get_or_create(user=user)
    return ledger_post(
        kind=TransactionKind.GRANT,
        entries={mint: -amount, wallet: amount},
        idempotency_key=idempotency_key,
        reference=reference,
        reason=reason,
        created_by=created_by,
        cause=cause,
    )


def wallet_transfer(
    *,
    source: User,
    destination: User,
    amount: int,
    idempotency_key: str,
    reference: str = "",
    reason: str = "",
    created_by: User | None = None,
) -> Transaction:
    """Move `amount` coins from one player's wallet to another's, as a settlement.

    A round with several players settles in one `ledger_post(kind="settlement", ...)`
    instead, with one net entry per player.
    """
    _check_positive(amount)
    if source.pk == destination.pk:
        raise InvalidEntries(_("A player cannot pay themselves."))
    if source.is_guest or destination.is_guest:
        raise InvalidEntries(_("A guest's coins cannot be paid to or from another player."))
    payer = wallet_get_or_create(user=source)
    payee = wallet_get_or_create(user=destination)
    return ledger_post(
        kind=TransactionKind.SETTLEMENT,
        entries={payer: -amount, payee: amount},
        idempotency_key=idempotency_key,
        reference=reference,
        reason=reason,
        created_by=created_by,
    )


def wallet_penalize(
    *,
    user: User,
    amount: int,
    idempotency_key: str,
    reference: str = "",
    reason: str = "",
    created_by: User | None = None,
) -> Transaction:
    """Move an escape penalty of `amount` coins from the player's wallet to the house."""
    _check_positive(amount)
    wallet = wallet_get_or_create(user=user)
    house = account_system_get_or_create(kind=AccountKind.HOUSE)
    return ledger_post(
        kind=TransactionKind.ESCAPE_PENALTY,
        entries={wallet: -amount, house: amount},
        idempotency_key=idempotency_key,
        reference=reference,
        reason=reason,
        created_by=created_by,
    )


def wallet_admin_adjust(
    *,
    user: User,
    amount: int,
    reason: str,
    created_by: User,
    idempotency_key: str,
) -> Transaction:
    """Credit (amount > 0) or debit (amount < 0) a player's wallet against the mint.

    For support corrections that are not the reversal of one transaction; `reason` is
    mandatory and `created_by` records the member of staff who made it.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise MissingReason(_("An adjustment needs a reason."))
    if not is_whole(amount) or amount == 0:
        raise InvalidAmount(_("An adjustment is a non-zero whole number of coins."))
    mint = account_system_get_or_create(kind=AccountKind.MINT)
    wallet = wallet_get_or_create(user=user)
    return ledger_post(
        kind=TransactionKind.ADMIN_ADJUSTMENT,
        entries={mint: -amount, wallet: amount},
        idempotency_key=idempotency_key,
        reason=reason.strip(),
        created_by=created_by,
    )


def ledger_reverse(
    *,
    original: Transaction,
    reason: str,
    created_by: User | None = None,
    idempotency_key: str | None = None,
) -> Transaction:
    """Post the exact negation of `original`, linked to it; the way to correct a transaction.

    A transaction is reversed at most once (AlreadyReversed) and a reversal is not itself
    reversed (NotReversible). The reversal keeps the original's reference, so both are found
    together. Without an explicit key it uses "reversal:<id>", so asking twice is harmless.
    """
    if original.kind == TransactionKind.REVERSAL:
        raise NotReversible(
            _("Transaction #%(id)s is a reversal; correct it with a new transaction instead.")
            % {"id": original.pk}
        )
    if not isinstance(reason, str) or not reason.strip():
        raise MissingReason(_("A reversal needs a reason."))
    negated = {
        account_id: -amount
        for account_id, amount in original.entries.values_list("account_id", "amount")
    }
    return ledger_post(
        kind=TransactionKind.REVERSAL,
        entries=negated,
        idempotency_key=idempotency_key or f"reversal:{original.pk}",
        reference=original.reference,
        reason=reason.strip(),
        created_by=created_by,
        reverses=original,
    )


def _check_positive(amount: int) -> None:
    if not is_whole(amount) or amount <= 0:
        raise InvalidAmount(
            _("The amount must be a positive whole number of coins, not %(amount)r.")
            % {"amount": amount}
        )
    if amount > MAX_AMOUNT:
        raise InvalidAmount(
            _("An amount cannot exceed %(max)s coins.") % {"max": f"{MAX_AMOUNT:,}"}
        )


# Users.


@transaction.atomic
def user_signup(
    *,
    username: str,
    password: str | None,
    email: str = "",
    ip_address: str | None = None,
    now: datetime | None = None,
) -> User:
    """Create a player with a wallet holding the sign-up grant (the economy settings'; by
    default settings.SIGNUP_GRANT).

    With `ip_address` (the sign-up page passes the client's), the sign-up counts against the
    address's quota for the UTC day (`signups_per_address_per_day`); over it, SignupRefused is
    raised and nothing is written. The quota is taken under a row lock in this transaction, so
    concurrent sign-ups from one address cannot exceed it and a failed sign-up does not count.
    The password is expected to have been validated by the sign-up form; None makes an account
    that cannot log in with a password (the load-test players: `manage.py load_test_players`).

    A name that holds an invisible character, or that looks like an existing account's name
    (the same `accounts.names.name_key`), is refused (SignupRefused `name_invisible`,
    `name_taken`); the key is locked for the transaction, so two look-alike sign-ups racing
    cannot both pass.

    The grant is taken from today's sign-up budget (`mint_ceiling_signup`, accounts.mint);
    past it the sign-up is refused (SignupRefused `mint_ceiling`, nothing written, support
    alerted) rather than made without coins: an account that cannot sit at any table would
    only ask for relief, which is minting too, and a flood of sign-ups is what the ceiling
    exists to stop.
    """
    username_check(username=username, lock=True)
    economy = economy_settings()
    return _account_open(
        username=username,
        password=password,
        email=email,
        address=ip_address,
        guest=False,
        grant=economy.effective_signup_grant,
        economy=economy,
        now=now,
    )


def _account_open(
    *,
    username: str,
    password: str | None,
    email: str,
    address: str | None,
    guest: bool,
    grant: int,
    economy: EconomySettings,
    now: datetime | None,
) -> User:
    """What a sign-up and a guest share, in the locks' order (the caller has locked the name's
    key): a sign-up of the address's quota for the UTC day (when an address is given), the
    grant from today's mint budget (the sign-up's or the guest's kind), the user with its
    wallet, and the grant posted under its one key. A refusal (SignupRefused `signup_limit`,
    `mint_ceiling`) writes nothing."""
    network = ""
    if address is not None:
        network = network_address(address)
        signup_quota_take(
            address=network, day=utc_day(now), limit=economy.signups_per_address_per_day
        )
    kind = MintKind.GUEST if guest else MintKind.SIGNUP
    if grant > 0:
        try:
            mint_budget_take(kind=kind, amount=grant, economy=economy, now=now)
        except MintBudgetExhausted as refused:
            raise SignupRefused("mint_ceiling", refused.message) from refused
    # The address is kept for the collusion report (two accounts from one address).
    user = User.objects.create_user(
        username=username, email=email, password=password, signup_address=network, is_guest=guest
    )
    wallet_get_or_create(user=user)
    if grant > 0:
        wallet_grant(
            user=user,
            amount=grant,
            idempotency_key=guest_grant_key(user) if guest else signup_grant_key(user),
            reference=f"user:{user.pk}",
            reason=GUEST_GRANT_REASON if guest else SIGNUP_GRANT_REASON,
            cause=economy_cause(economy),
        )
    return user


# Guests: playing without an account (docs/security.md, "Guests").

GUEST_NAME_PREFIX = "Guest-"
# Letters and digits that do not look alike (no 0/O, 1/I/L): a name read out stays one name.
_GUEST_NAME_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
_GUEST_NAME_LENGTH = 6
_GUEST_NAME_TRIES = 10
REMOVED_GUEST_PREFIX = "removed-guest-"


def guest_grant_key(user: User) -> str:
    return f"guest-grant:user:{user.pk}"


def signup_grant_key(user: User) -> str:
    """The sign-up grant's key: one per account, whether it signed up or converted a guest."""
    return f"signup-grant:user:{user.pk}"


def _guest_name() -> str:
    return GUEST_NAME_PREFIX + "".join(
        secrets.choice(_GUEST_NAME_ALPHABET) for _n in range(_GUEST_NAME_LENGTH)
    )


@transaction.atomic
def guest_create(*, address: str | None, now: datetime | None = None) -> User:
    """Create a guest: a player with a generated name ("Guest-7KQ2MX"), an unusable password
    and a wallet holding the guest grant (`EconomySettings.guest_grant`), who may play at once.

    `address` is the client's IP address (``REMOTE_ADDR``): a guest counts against the
    address's sign-ups of the UTC day exactly as a sign-up does (`signup_quota_take`,
    SignupRefused `signup_limit`), so guests and sign-ups together stay within
    `signups_per_address_per_day`. The grant is taken from today's guest budget
    (`mint_ceiling_guest`; past it SignupRefused `mint_ceiling`). A refusal writes nothing.
    The caller logs the guest in (`accounts.views.guest_login`); a guest plays only Play now
    tables full of bots (lobby.checks) and claims no grant (accounts.economy)."""
    # Locks in user_signup's order: the name's key, the address's quota, the mint's budget.
    for _attempt in range(_GUEST_NAME_TRIES):
        username = _guest_name()
        if username_refusal(username=username) is None:
            break
    else:  # 31**6 names: only a nearly full name space gets here
        raise SignupRefused("name_taken", _("No guest name is free now. Please sign up."))
    username_check(username=username, lock=True)
    economy = economy_settings()
    user = _account_open(
        username=username,
        password=None,
        email="",
        address=address or "",  # no address: the shared "unknown" one, counted all the same
        guest=True,
        grant=economy.guest_grant,
        economy=economy,
        now=now,
    )
    logger.info("accounts: guest %s created from %s", user.pk, user.signup_address)
    return user


def guest_signup_topup(*, user: User, economy: EconomySettings | None = None) -> int:
    """The coins a guest receives on signing up: the sign-up grant less the guest grant it
    was given (never below 0). A guest's grants together are at most one sign-up grant."""
    economy = economy or economy_settings()
    given = (
        Transaction.objects.filter(idempotency_key=guest_grant_key(user))
        .values_list("entries__amount", flat=True)
        .filter(entries__account__user=user)
        .first()
    )
    return max(0, economy.effective_signup_grant - int(given or 0))


@transaction.atomic
def guest_convert(
    *,
    user: User,
    username: str,
    password: str,
    email: str = "",
    now: datetime | None = None,
) -> User:
    """Make a guest a full account, on the same row: its wallet, rounds, history and
    standings stay as they are. `username` may be the guest's own name or a new one (refused
    as at sign-up: `name_taken`, `name_invisible`); the password is expected to have been
    validated by the form.

    The wallet then receives the rest of the sign-up grant (`guest_signup_topup`), from
    today's sign-up budget (past its ceiling: SignupRefused `mint_ceiling`, nothing written,
    the guest stays a guest). It takes no second sign-up from the address's quota: the guest
    took one when it was created, and the grant is keyed per account, so a guest turned
    account can never be paid a sign-up grant twice. Refused for an account that is not an
    active guest (`not_a_guest`)."""
    locked = User.objects.select_for_update().get(pk=user.pk)
    if not locked.is_guest or not locked.is_active:
        raise SignupRefused("not_a_guest", _("Only a guest can sign up this way."))
    username_check(username=username, user=locked, lock=True)
    economy = economy_settings()
    rest = guest_signup_topup(user=locked, economy=economy)
    if rest > 0:
        try:
            mint_budget_take(kind=MintKind.SIGNUP, amount=rest, economy=economy, now=now)
        except MintBudgetExhausted as refused:
            raise SignupRefused("mint_ceiling", refused.message) from refused
    locked.username = username
    locked.email = email
    locked.set_password(password)
    locked.is_guest = False
    locked.save()
    if rest > 0:
        wallet_grant(
            user=locked,
            amount=rest,
            idempotency_key=signup_grant_key(locked),
            reference=f"user:{locked.pk}",
            reason=GUEST_SIGNUP_REASON,
            cause=economy_cause(economy),
        )
    logger.info("accounts: guest %s signed up", locked.pk)
    user.refresh_from_db()
    return user


# What the other apps do before an idle guest is removed (the lobby frees its seat): they sit
# above accounts and register here when they start, so accounts imports none of them.
_guest_departures: list[Callable[[User], None]] = []


def guest_departure_register(hook: Callable[[User], None]) -> None:
    """Have `guest_remove` call ``hook(user)`` first (registering it again changes nothing)."""
    if hook not in _guest_departures:
        _guest_departures.append(hook)


def guest_idle_cutoff(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(days=settings.GUEST_IDLE_DAYS)


def guests_idle(*, now: datetime | None = None) -> Any:
    """Active guests that have neither logged in, nor been created, nor had a coin move in
    their wallet (every settled round they won or lost moves one) since `guest_idle_cutoff`."""
    cutoff = guest_idle_cutoff(now)
    return (
        User.objects.filter(is_guest=True, is_active=True, is_bot=False, date_joined__lt=cutoff)
        .exclude(last_login__gte=cutoff)
        .exclude(wallet__entries__transaction__created_at__gte=cutoff)
        .order_by("pk")
    )


@transaction.atomic
def guest_remove(*, user: User, now: datetime | None = None) -> bool:
    """Remove an idle guest, keeping the ledger and the rounds whole: its coins go back to
    the mint (one `guest_reclaim` transaction, keyed per guest), and the row stays —
    deactivated (it can no longer log in; a session it had is no longer recognised),
    with a neutral name, no e-mail, address or password — because played rounds, seats
    and ledger entries refer to it, and a round's record must stay readable.

    Does nothing (False) for an account that is not an active guest, a guest no longer idle
    (checked again under the user's lock) or one in an unsettled round (asked again by the
    next run). Before moving coins, the registered departures run (the lobby frees its seat)."""
    locked = User.objects.select_for_update().filter(pk=user.pk).first()
    if locked is None or not locked.is_guest or not locked.is_active:
        return False
    if not guests_idle(now=now).filter(pk=locked.pk).exists():
        return False
    if in_unsettled_round(user=locked):
        return False
    for departure in _guest_departures:
        departure(locked)
    wallet = wallet_get_or_create(user=locked)
    balance = Account.objects.select_for_update().get(pk=wallet.pk).balance
    if balance > 0:
        mint = account_system_get_or_create(kind=AccountKind.MINT)
        ledger_post(
            kind=TransactionKind.GUEST_RECLAIM,
            entries={wallet: -balance, mint: balance},
            idempotency_key=f"guest-reclaim:user:{locked.pk}",
            reference=f"user:{locked.pk}",
            reason=GUEST_RECLAIM_REASON,
        )
    locked.username = f"{REMOVED_GUEST_PREFIX}{locked.pk}"
    locked.email = ""
    locked.first_name = ""
    locked.last_name = ""
    locked.signup_address = ""
    locked.set_unusable_password()
    locked.is_active = False
    locked.guest_removed_at = now or timezone.now()
    locked.save()
    logger.info("accounts: idle guest %s removed, %s coins back to the mint", locked.pk, balance)
    return True


def guests_idle_remove(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Remove up to `limit` idle guests (`guest_remove`, each in its own transaction; one
    that fails is logged and left for the next run). Returns how many were removed."""
    removed = 0
    for user in guests_idle(now=now)[:limit]:
        try:
            removed += guest_remove(user=user, now=now)
        except Exception:
            logger.exception("accounts: could not remove idle guest %s", user.pk)
    return removed


def username_refusal(*, username: str, user: User | None = None) -> SignupRefused | None:
    """Why an account may not take this name, or None: an invisible character in it, or
    another account (any: player, staff or bot) whose name looks the same. `user` is the
    account being renamed, if any: a look-alike of its own name is its own (``bob`` to
    ``Bob``). Every path that sets a user name asks this: sign-up, the admin's add and rename
    forms, the demo admin and the bots."""
    if has_invisible(username):
        return SignupRefused("name_invisible", _("A user name cannot hold invisible characters."))
    others = User.objects.filter(name_key=name_key(username))
    if user is not None and user.pk is not None:
        others = others.exclude(pk=user.pk)
    if others.exists():
        return SignupRefused(
            "name_taken",
            _("This name looks like the name of an existing player. Please choose another."),
        )
    return None


def username_check(*, username: str, user: User | None = None, lock: bool = False) -> None:
    """Raise `username_refusal`'s refusal, if any. With `lock` (inside a transaction, on
    PostgreSQL) first take a transaction lock on the name's key, so that a concurrent sign-up
    or rename to a look-alike name waits for this one and then sees it."""
    if lock and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [name_key(username)])
    refusal = username_refusal(username=username, user=user)
    if refusal is not None:
        raise refusal


def signup_quota_take(*, address: str, day: date, limit: int) -> SignupQuota:
    """Count one sign-up from `address` on `day`, or raise SignupRefused if `limit` (> 0) are
    already counted. Call inside the transaction that creates the user."""
    SignupQuota.objects.get_or_create(address=address, day=day)
    quota = SignupQuota.objects.select_for_update().get(address=address, day=day)
    if limit > 0 and quota.count >= limit:
        logger.warning(
            "accounts: sign-up refused, %s accounts already created today from %s",
            quota.count,
            address,
        )
        raise SignupRefused(
            "signup_limit",
            ngettext(
                "An account has already been created from your network address today, the "
                "most allowed. Please try again tomorrow (from 00:00 UTC) or log in.",
                "%(limit)s accounts have already been created from your network address "
                "today, the most allowed. Please try again tomorrow (from 00:00 UTC) or log in.",
                limit,
            )
            % {"limit": limit},
        )
    quota.count += 1
    quota.save(update_fields=["count"])
    return quota


# Grants players claim: the daily bonus and relief for broke players.


def _lock_player(user: User) -> None:
    """Serialise one player's claims. The user row is locked by nothing else, and only before
    the ledger locks the mint and the wallet, so this adds no lock cycle."""
    User.objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True).get()


@transaction.atomic
def wallet_daily_bonus_claim(*, user: User, now: datetime | None = None) -> Transaction:
    """Credit today's bonus (the economy settings' `daily_bonus`) to the player's wallet.

    Once per UTC day: the idempotency key "daily_bonus:user:<id>:<date>" makes a second
    posting impossible, and a second claim, even one racing the first, raises
    ClaimRefused("already_claimed"). Other refusals: `daily_bonus_off`, `bot`, and
    `mint_ceiling` (MintBudgetExhausted) once today's daily bonuses reach their ceiling.
    """
    _lock_player(user)
    economy = economy_settings()
    refusal = daily_bonus_refusal(user=user, economy=economy, now=now)
    if refusal is not None:
        if isinstance(refusal, MintBudgetExhausted):
            mint_refusal_alert(refusal, economy=economy, now=now)
        raise refusal
    mint_budget_take(
        kind=MintKind.DAILY_BONUS, amount=economy.daily_bonus, economy=economy, now=now
    )
    posted = _mint_to(
        user=user,
        kind=TransactionKind.DAILY_BONUS,
        amount=economy.daily_bonus,
        idempotency_key=daily_bonus_key(user=user, day=utc_day(now)),
        cause=economy_cause(economy),
    )
    logger.info("accounts: daily bonus of %s coins to user %s", economy.daily_bonus, user.pk)
    return posted


@transaction.atomic
def wallet_relief_claim(*, user: User, now: datetime | None = None) -> Transaction:
    """Credit a relief grant (`relief_amount`) to a player holding fewer than `relief_below`
    coins, at most `relief_per_day` times per UTC day, never during a round.

    The n-th relief of a day is keyed "relief:user:<id>:<date>:<n>", so two racing claims are
    one posting. Refusals (ClaimRefused): `relief_off`, `not_broke`, `relief_limit`,
    `in_round`, `bot`, `mint_ceiling` (today's relief grants reached their ceiling).
    """
    _lock_player(user)
    economy = economy_settings()
    refusal = relief_refusal(user=user, economy=economy, now=now)
    if refusal is not None:
        if isinstance(refusal, MintBudgetExhausted):
            mint_refusal_alert(refusal, economy=economy, now=now)
        raise refusal
    day = utc_day(now)
    number = reliefs_claimed(user=user, day=day) + 1
    mint_budget_take(kind=MintKind.RELIEF, amount=economy.relief_amount, economy=economy, now=now)
    posted = _mint_to(
        user=user,
        kind=TransactionKind.RELIEF,
        amount=economy.relief_amount,
        idempotency_key=f"{relief_key_prefix(user=user, day=day)}{number}",
        cause=economy_cause(economy),
    )
    logger.info("accounts: relief of %s coins to user %s", economy.relief_amount, user.pk)
    return posted


def _mint_to(
    *, user: User, kind: str, amount: int, idempotency_key: str, cause: str
) -> Transaction:
    _check_positive(amount)
    mint = account_system_get_or_create(kind=AccountKind.MINT)
    wallet = wallet_get_or_create(user=user)
    return ledger_post(
        kind=kind,
        entries={mint: -amount, wallet: amount},
        idempotency_key=idempotency_key,
        reference=f"user:{user.pk}",
        cause=cause,
    )


# The house's bankroll: the coins the platform's own players (bots) play with.


@dataclass(frozen=True)
class HouseLevel:
    """What `wallet_house_level` moved: coins from the house to the wallet (`funded`), from
    the wallet back to the house (`swept`), and from the mint into the house (`minted`)."""

    funded: int = 0
    swept: int = 0
    minted: int = 0


@transaction.atomic
def wallet_house_level(
    *, user: User, target: int, key: str, reference: str, reason: str = ""
) -> HouseLevel:
    """Bring the wallet of one of the house's players to exactly `target` coins, against the
    house: what it holds above goes back to the house (`bot_sweep`), what it lacks comes from
    the house (`bot_funding`). When the house holds less than that, the mint first tops the
    house up by the difference (`house_funding`), within today's bot-funding budget
    (`mint_ceiling_bot_funding`); past it MintBudgetExhausted is raised and nothing moves.

    So a player who beats the house's players wins coins the house won before (escape
    penalties, table fees, their own winnings swept back) and, beyond that, at most the daily
    ceiling of new ones. `key` names this levelling (it must change whenever the wallet does,
    e.g. by naming its last entry): each posting's idempotency key is `key` plus its part.
    Locks the wallet, then the budget, then the house and the mint (as the ledger does)."""
    wallet = wallet_get_or_create(user=user)
    wallet = Account.objects.select_for_update().get(pk=wallet.pk)
    house = account_system_get_or_create(kind=AccountKind.HOUSE)
    if wallet.balance > target:
        surplus = wallet.balance - target
        ledger_post(
            kind=TransactionKind.BOT_SWEEP,
            entries={wallet: -surplus, house: surplus},
            idempotency_key=f"{key}:sweep",
            reference=reference,
        )
        return HouseLevel(swept=surplus)
    missing = target - wallet.balance
    if missing <= 0:
        return HouseLevel()
    house = Account.objects.select_for_update().get(pk=house.pk)
    shortfall = missing - max(0, house.balance)
    if shortfall > 0:
        economy = economy_settings()
        mint_budget_take(kind=MintKind.BOT_FUNDING, amount=shortfall, economy=economy)
        mint = account_system_get_or_create(kind=AccountKind.MINT)
        ledger_post(
            kind=TransactionKind.HOUSE_FUNDING,
            entries={mint: -shortfall, house: shortfall},
            idempotency_key=f"{key}:house",
            reference=reference,
            cause=f"{economy_cause(economy)}:bot_funding",
        )
    ledger_post(
        kind=TransactionKind.BOT_FUNDING,
        entries={house: -missing, wallet: missing},
        idempotency_key=f"{key}:fund",
        reference=reference,
        reason=reason,
    )
    return HouseLevel(funded=missing, minted=max(0, shortfall))


# The economy settings.


def economy_settings_get_or_create() -> EconomySettings:
    """The stored economy settings, created with the defaults if there are none yet."""
    stored, _created = EconomySettings.objects.get_or_create(pk=EconomySettings.SINGLETON_ID)
    return stored


def economy_cause(economy: EconomySettings) -> str:
    """The cause a grant paid under these settings carries: their version."""
    return f"economy_settings:v{economy.version}"


def _may_change_economy(user: User) -> bool:
    return bool(user.is_active and user.is_staff and user.has_perm(ECONOMY_MONEY_PERMISSION))


@transaction.atomic
def economy_change_propose(
    *, user: User, values: dict[str, Any], reason: str = ""
) -> EconomyChange:
    """Store a proposed change of the economy settings; it changes nothing until another
    economy administrator approves it (`economy_change_approve`).

    `values` maps setting names to proposed values; only those that differ from the stored
    settings are kept; `reason` (why, for the approver) is kept with them. Refused
    (EconomyChangeRefused, nothing written): a proposer without
    `accounts.change_economy_money`, an unknown field, no difference, or a value the model
    refuses (its bounds: `ECONOMY_BOUNDS`).
    """
    if not _may_change_economy(user):
        raise EconomyChangeRefused(
            "not_permitted",
            _(
                "Changing what the mint pays or a protection needs the economy administrator "
                "permission; nothing was changed."
            ),
        )
    unknown = sorted(set(values) - set(ECONOMY_GUARDED_FIELDS))
    if unknown:
        raise EconomyChangeRefused(
            "unknown_field", _("Unknown economy settings: %(names)s.") % {"names": unknown}
        )
    stored = economy_settings_get_or_create()
    changed = {name: value for name, value in values.items() if getattr(stored, name) != value}
    if not changed:
        raise EconomyChangeRefused("no_change", _("The proposal changes nothing."))
    _economy_checked(stored, changed)
    change = EconomyChange.objects.create(
        values=changed, proposed_by=user, reason=reason.strip()[:200]
    )
    logger.info("accounts: economy change %s proposed by user %s", change.pk, user.pk)
    return change


@transaction.atomic
def economy_change_approve(*, change: EconomyChange, approver: User) -> EconomySettings:
    """Apply a pending change approved by an economy administrator other than its proposer:
    the settings take its values (checked again against the model and its bounds) and their
    version rises by one; the history records the approver. Refused (EconomyChangeRefused,
    nothing written): no permission, the proposer themselves, a change no longer pending."""
    if not _may_change_economy(approver):
        raise EconomyChangeRefused(
            "not_permitted",
            _("Approving an economy change needs the economy administrator permission."),
        )
    locked = EconomyChange.objects.select_for_update().get(pk=change.pk)
    if locked.status != EconomyChangeStatus.PENDING:
        raise EconomyChangeRefused(
            "not_pending", _("Economy change #%(id)s is not pending.") % {"id": locked.pk}
        )
    if locked.proposed_by_id == approver.pk:
        raise EconomyChangeRefused(
            "own_change",
            _("A change must be approved by another economy administrator than its proposer."),
        )
    economy_settings_get_or_create()
    stored = EconomySettings.objects.select_for_update().get(pk=EconomySettings.SINGLETON_ID)
    _economy_checked(stored, locked.values)
    for name, value in locked.values.items():
        setattr(stored, name, value)
    stored.version += 1
    stored._history_user = approver  # type: ignore[attr-defined]
    stored.save()
    locked.status = EconomyChangeStatus.APPLIED
    locked.approved_by = approver
    locked.applied_at = timezone.now()
    locked.applied_version = stored.version
    locked.save(update_fields=["status", "approved_by", "applied_at", "applied_version"])
    logger.info(
        "accounts: economy change %s approved by user %s (version %s)",
        locked.pk,
        approver.pk,
        stored.version,
    )
    change.refresh_from_db()
    return stored


def _economy_checked(stored: EconomySettings, values: dict[str, Any]) -> None:
    """Raise EconomyChangeRefused unless the settings with `values` pass the model's checks."""
    candidate = EconomySettings(
        **{name: values.get(name, getattr(stored, name)) for name in ECONOMY_GUARDED_FIELDS},
        pk=stored.pk,
    )
    try:
        candidate.full_clean(exclude=["id"], validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        messages = "; ".join(
            f"{name}: {' '.join(str(m) for m in errs)}" for name, errs in error.message_dict.items()
        )
        raise EconomyChangeRefused("invalid", messages) from error


# Settings.


@transaction.atomic
def user_settings_update(*, user: User, default_layout: bool) -> User:
    """Save the player's table settings: whether a new hand opens laid out as the first
    suggestion (RULES.md §6). Only that column is written."""
    user.default_layout = default_layout
    user.save(update_fields=["default_layout"])
    return user


# Password reset links: how a player who lost their password gets a new one. Staff send the
# link; nobody but the player, not even a superuser, sets a player's password.


class _OneAccountResetForm(PasswordResetForm):
    """Django's password reset e-mail, for one account (Django's form would write to every
    account sharing the address)."""

    def __init__(self, user: User) -> None:
        super().__init__(data={"email": user.email})
        self.account = user

    def get_users(self, email: str) -> Iterator[User]:
        yield self.account

    def send_mail(
        self,
        subject_template_name: str,
        email_template_name: str,
        context: dict[str, Any],
        from_email: str | None,
        to_email: str,
        html_email_template_name: str | None = None,
    ) -> None:
        """Django's message, but a failure to send is raised, not only logged: staff are
        told that no link went out (the public page keeps Django's silence)."""
        subject = "".join(render_to_string(subject_template_name, context).splitlines())
        body = render_to_string(email_template_name, context)
        EmailMultiAlternatives(subject, body, from_email, [to_email]).send()


def password_reset_refusal(*, user: User) -> str | None:
    """Why no reset link can be sent to this account, or None."""
    if user.is_bot:
        return _("%(user)s is a bot: it has no password.") % {"user": user}
    if not user.is_active:
        return _("%(user)s is deactivated.") % {"user": user}
    if not user.email:
        return _("%(user)s has no e-mail address.") % {"user": user}
    return None


def user_password_reset_link_send(*, user: User, request: HttpRequest) -> None:
    """E-mail the account a link to choose a new password (Django's token: it works once, for
    PASSWORD_RESET_TIMEOUT, and no more once the password has changed), through the configured
    e-mail backend. The password stays as it is until the player uses the link."""
    refusal = password_reset_refusal(user=user)
    if refusal is not None:
        raise ValueError(refusal)
    form = _OneAccountResetForm(user)
    if not form.is_valid():
        raise ValueError(_("%(user)s has no valid e-mail address.") % {"user": user})
    form.save(
        request=request,
        use_https=request.is_secure(),
        subject_template_name="accounts/password_reset_subject.txt",
        email_template_name="accounts/password_reset_email.txt",
    )


def user_email_change_notify(*, user: User, old_email: str, request: HttpRequest) -> None:
    """Tell the previous address that staff changed the account's e-mail address (reset links
    go to the new one: a player whose address was changed behind their back learns of it)."""
    if not old_email or old_email == user.email:
        return
    context = {
        "user": user,
        "new_email": user.email or "-",
        "site_name": request.get_host(),
    }
    send_mail(
        _("The e-mail address of your account was changed"),
        render_to_string("accounts/email_changed_email.txt", context, request=request),
        None,
        [old_email],
    )
