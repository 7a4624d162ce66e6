"""Users and the coin ledger.

The ledger is double-entry and append-only. An `Account` holds coins: one wallet per player,
plus the system accounts (the mint, which issues grants and therefore goes negative, and the
house, which receives escape penalties). A `Transaction` is one movement of coins, made of
`Entry` rows whose amounts sum to zero. Rows are written only by `accounts.ledger.ledger_post`;
the database rejects updates and deletes of transactions and entries, unbalanced transactions
and negative wallets (migration 0003), so a bug or a hand-written SQL statement cannot create or
destroy coins.
"""

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from accounts.names import name_key


class User(AbstractUser):
    """A player or an operator.

    A custom user model from the first migration, so that fields can be added later without
    rewriting every foreign key to the user table. ``is_bot``: a bot player (games.live.bots),
    seated and played by the platform; it has an unusable password and never logs in. A bot's
    nickname is a pair: ``first_name`` in Chinese, ``last_name`` in English (games.live.bots).
    ``default_layout``: the player's table setting of how a new hand opens (RULES.md §6).
    ``name_key``: what the username looks like (``accounts.names.name_key``, the UTS #39
    skeleton), written on every save; sign-up and the admin refuse a name whose key another
    account has (``accounts.services.username_refusal``).
    ``signup_address``: the address the account signed up from (``accounts.economy
    .network_address``; blank for accounts made before it was kept, or not through the sign-up
    page): the collusion report weighs two accounts from one address.
    ``is_guest``: a guest (``accounts.services.guest_create``), playing without having signed
    up: a generated name, an unusable password, the guest grant; it sits only at Play now
    tables full of bots and claims no grant (docs/security.md, "Guests"). Signing up
    (``guest_convert``) clears it on the same row. ``guest_removed_at``: when an idle guest was
    removed (``guests_idle_remove``): deactivated and anonymised, its coins back in the mint.
    ``transfers_frozen_*``: support froze the account's transfers pending a collusion review
    (``accounts.collusion.transfers_freeze``): it takes no seat and claims no grant until
    unfrozen. Every freeze and unfreeze is kept in :class:`TransferFreeze`.
    """

    is_bot = models.BooleanField(
        _("bot"),
        default=False,
        help_text=_("A bot player, played by the platform; it cannot log in."),
    )
    default_layout = models.BooleanField(
        _("open the hand laid out as the best suggestion"),
        default=True,
        help_text=_(
            "On: a new hand opens laid out in the rows as the first suggestion (one tap on "
            "Reset clears them). Off: it opens sorted in the hand area, the rows empty."
        ),
    )

    name_key = models.CharField(
        _("look-alike key"),
        max_length=600,
        blank=True,
        db_index=True,
        editable=False,
        help_text=_("The user name's Unicode skeleton: look-alike names share it."),
    )

    signup_address = models.CharField(
        _("sign-up address"), max_length=64, blank=True, default="", editable=False
    )
    transfers_frozen_at = models.DateTimeField(
        _("transfers frozen at"), null=True, blank=True, editable=False
    )
    transfers_frozen_by = models.ForeignKey(
        "self",
        verbose_name=_("transfers frozen by"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        editable=False,
        related_name="+",
    )
    transfers_frozen_note = models.TextField(
        _("why the transfers are frozen"), blank=True, default="", editable=False
    )
    is_guest = models.BooleanField(
        _("guest"),
        default=False,
        db_index=True,
        help_text=_(
            "Playing without an account: sits only at Play now tables with bots, claims no "
            "grant. Signing up makes it a full account."
        ),
    )
    guest_removed_at = models.DateTimeField(
        _("guest removed at"), null=True, blank=True, editable=False
    )

    class Meta(AbstractUser.Meta):
        permissions = [
            ("send_password_reset", _("Can send a user a password reset link")),
            ("freeze_transfers", _("Can freeze a player's transfers pending review")),
        ]

    @property
    def transfers_frozen(self) -> bool:
        return self.transfers_frozen_at is not None

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.name_key = name_key(self.get_username() or "")
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "username" in update_fields:
            kwargs["update_fields"] = {*update_fields, "name_key"}
        super().save(*args, **kwargs)

    def display_name(self) -> str:
        """The name other players see: a person's username; a bot's nickname in the active
        language (the other language's when one is missing, the username when both are)."""
        if not self.is_bot:
            return self.get_username()
        chinese = (get_language() or "").lower().startswith("zh")
        first, second = (
            (self.first_name, self.last_name) if chinese else (self.last_name, self.first_name)
        )
        return first or second or self.get_username()


class AccountKind(models.TextChoices):
    WALLET = "wallet", _("Player wallet")
    MINT = "mint", _("Mint")
    HOUSE = "house", _("House")


class Account(models.Model):
    """Somewhere coins are held.

    `balance` is a cache of the sum of the account's entries. It starts at zero and is changed
    only by the database trigger that applies each new entry, inside `ledger_post`, while the
    account is locked; a player wallet's balance never goes below zero.
    """

    kind = models.CharField(_("kind"), max_length=16, choices=AccountKind.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="wallet",
    )
    balance = models.BigIntegerField(_("balance"), default=0, editable=False)
    created_at = models.DateTimeField(_("created at"), db_default=Now(), editable=False)

    class Meta:
        verbose_name = _("account")
        verbose_name_plural = _("accounts")
        ordering = ["id"]
        permissions = [("adjust_wallet", _("Can credit or debit a player's wallet"))]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=AccountKind.values), name="account_kind_known"
            ),
            models.CheckConstraint(
                condition=(
                    Q(kind=AccountKind.WALLET, user__isnull=False)
                    | (~Q(kind=AccountKind.WALLET) & Q(user__isnull=True))
                ),
                name="account_wallet_has_a_user",
            ),
            models.CheckConstraint(
                condition=~Q(kind=AccountKind.WALLET) | Q(balance__gte=0),
                name="account_wallet_not_negative",
            ),
            models.UniqueConstraint(
                fields=["kind"],
                condition=~Q(kind=AccountKind.WALLET),
                name="account_one_per_system_kind",
            ),
        ]

    def __str__(self) -> str:
        if self.kind == AccountKind.WALLET:
            return gettext("Wallet of %(username)s") % {"username": self.user}
        return str(self.get_kind_display())


class TransactionKind(models.TextChoices):
    GRANT = "grant", _("Grant")
    SETTLEMENT = "settlement", _("Settlement")
    ESCAPE_PENALTY = "escape_penalty", _("Escape penalty")
    ADMIN_ADJUSTMENT = "admin_adjustment", _("Admin adjustment")
    REVERSAL = "reversal", _("Reversal")
    DAILY_BONUS = "daily_bonus", _("Daily bonus")
    RELIEF = "relief", _("Relief grant")
    HOUSE_FUNDING = "house_funding", _("House funding from the mint")
    BOT_FUNDING = "bot_funding", _("Bot funding from the house")
    BOT_SWEEP = "bot_sweep", _("Bot winnings back to the house")
    TABLE_FEE = "table_fee", _("Table fee")
    GUEST_RECLAIM = "guest_reclaim", _("Idle guest's coins back to the mint")


# Kinds whose transactions must say why they were made.
KINDS_NEEDING_A_REASON = (TransactionKind.ADMIN_ADJUSTMENT, TransactionKind.REVERSAL)

# Reasons the platform writes itself: stored in English (the ledger's data does not change
# with a reader's language), shown in the reader's language (Transaction.reason_display).
SIGNUP_GRANT_REASON = "Sign-up grant"
GUEST_GRANT_REASON = "Guest grant"
GUEST_SIGNUP_REASON = "Sign-up grant: the rest after the guest grant"
GUEST_RECLAIM_REASON = "Idle guest removed: its coins back to the mint"
BOT_FUNDING_REASON = "Bot funding: the room's entry minimum"
SYSTEM_REASONS = {
    SIGNUP_GRANT_REASON: _("Sign-up grant"),
    GUEST_GRANT_REASON: _("Guest grant"),
    GUEST_SIGNUP_REASON: _("Sign-up grant: the rest after the guest grant"),
    GUEST_RECLAIM_REASON: _("Idle guest removed: its coins back to the mint"),
    BOT_FUNDING_REASON: _("Bot funding: the room's entry minimum"),
}
# References that name a round or a room: "round:<id>", "room:<id>".
REFERENCE_LABELS = {"round": _("Round #%(id)s"), "room": _("Room #%(id)s")}


class Transaction(models.Model):
    """One movement of coins: entries summing to zero, posted once, never changed.

    `idempotency_key` names the operation (e.g. "settle:round:123"); posting it again returns
    this transaction. `content_hash` is the SHA-256 of its canonical content, so that the same
    key with different content is recognised and refused.
    """

    kind = models.CharField(_("kind"), max_length=32, choices=TransactionKind.choices)
    reference = models.CharField(
        _("reference"),
        max_length=100,
        blank=True,
        db_index=True,
        help_text=_('What caused it, e.g. "round:123".'),
    )
    reason = models.TextField(_("reason"), blank=True)
    idempotency_key = models.CharField(_("idempotency key"), max_length=200, unique=True)
    content_hash = models.CharField(_("content hash"), max_length=64)
    reverses = models.OneToOneField(
        "self",
        verbose_name=_("reverses"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="reversed_by",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("created by"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    cause = models.CharField(
        _("cause"),
        max_length=100,
        blank=True,
        default="",
        db_default="",
        help_text=_(
            'Under what the platform paid it when no person did: "economy_settings:v3" for a '
            "grant paid under that version of the economy settings."
        ),
    )
    created_at = models.DateTimeField(
        _("created at"), db_default=Now(), editable=False, db_index=True
    )

    class Meta:
        verbose_name = _("transaction")
        verbose_name_plural = _("transactions")
        ordering = ["-id"]
        permissions = [("reverse_transaction", _("Can reverse a ledger transaction"))]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=TransactionKind.values), name="transaction_kind_known"
            ),
            models.CheckConstraint(
                condition=(
                    Q(kind=TransactionKind.REVERSAL, reverses__isnull=False)
                    | (~Q(kind=TransactionKind.REVERSAL) & Q(reverses__isnull=True))
                ),
                name="transaction_reversal_has_a_target",
            ),
            models.CheckConstraint(
                condition=~Q(kind__in=KINDS_NEEDING_A_REASON) | ~Q(reason=""),
                name="transaction_reason_when_required",
            ),
            models.CheckConstraint(
                condition=~Q(idempotency_key=""), name="transaction_idempotency_key_not_empty"
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_kind_display()}"

    def reason_display(self) -> str:
        """The reason in the reader's language when the platform wrote it; a person's (an
        admin adjustment's, a reversal's) as it was typed."""
        return str(SYSTEM_REASONS.get(self.reason, self.reason))

    def reference_display(self) -> str:
        """What caused it, in words: "Round #12", "Room #3"; "" for ``user:<id>`` (the
        player's own account: a grant, a bonus); any other reference as stored."""
        kind, _sep, ident = self.reference.partition(":")
        if kind == "user":
            return ""
        label = REFERENCE_LABELS.get(kind)
        if label is None or not ident.isdigit():
            return self.reference
        return str(label) % {"id": ident}

    def reference_round_id(self) -> int | None:
        """The round a ``round:<id>`` reference names, else None."""
        kind, _sep, ident = self.reference.partition(":")
        return int(ident) if kind == "round" and ident.isdigit() else None


class Entry(models.Model):
    """One account's share of a transaction: a non-zero amount, credit (+) or debit (-).

    `balance_after` is the account's balance once this entry was applied, so a statement can
    be read without summing; the database checks it when the entry is inserted.
    """

    transaction = models.ForeignKey(
        Transaction,
        verbose_name=_("transaction"),
        on_delete=models.PROTECT,
        related_name="entries",
    )
    account = models.ForeignKey(
        Account, verbose_name=_("account"), on_delete=models.PROTECT, related_name="entries"
    )
    amount = models.BigIntegerField(_("amount"))
    balance_after = models.BigIntegerField(_("balance after"))

    class Meta:
        verbose_name = _("entry")
        verbose_name_plural = _("entries")
        ordering = ["-id"]
        permissions = [("export_ledger", _("Can export ledger entries as CSV"))]
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="entry_amount_not_zero"),
            models.UniqueConstraint(
                fields=["transaction", "account"], name="entry_one_per_account_and_transaction"
            ),
        ]
        indexes = [models.Index(fields=["account", "-id"], name="entry_account_newest_first")]

    def __str__(self) -> str:
        return f"{self.amount:+d} → {self.account} ({self.transaction})"


# The economy: what coins the platform gives away, and what watches for their abuse.

# The defaults of the economy settings (documented in docs/security.md). The sign-up grant's
# default is the SIGNUP_GRANT setting, read when a player signs up.
DEFAULT_DAILY_BONUS = 2_000
DEFAULT_RELIEF_AMOUNT = 10_000
DEFAULT_RELIEF_BELOW = 5_000
DEFAULT_RELIEF_PER_DAY = 2
DEFAULT_SIGNUPS_PER_ADDRESS_PER_DAY = 5
DEFAULT_COLLUSION_MIN_ROUNDS = 20
DEFAULT_COLLUSION_DAYS = 7
DEFAULT_COLLUSION_MIN_SHARE_PERCENT = 80
DEFAULT_COLLUSION_MIN_FLOW = 20_000
# The daily mint ceilings (UTC days): at most this many coins minted per kind per day. Sized
# for a busy day of honest play (about 1,000 sign-ups at the default grant, 10,000 daily
# bonuses, 2,000 reliefs) and far below what an abuse could otherwise mint.
DEFAULT_MINT_CEILING_SIGNUP = 100_000_000
DEFAULT_MINT_CEILING_DAILY_BONUS = 20_000_000
DEFAULT_MINT_CEILING_RELIEF = 20_000_000
DEFAULT_MINT_CEILING_BOT_FUNDING = 5_000_000
# Guests: a small grant (enough for Play now at base score 1, whose entry minimum is 324 with
# the default rules), under a ceiling of its own (5,000 guests a day at the default grant).
DEFAULT_GUEST_GRANT = 2_000
DEFAULT_MINT_CEILING_GUEST = 10_000_000
DEFAULT_TABLE_FEE_PERCENT = 0
# Far below BIGINT's range, like accounts.ledger.MAX_AMOUNT (which imports this module).
MAX_ECONOMY_AMOUNT = 10**15


# The hard upper bound of every economy value (docs/security.md, "Economy bounds"). Checked by
# the model's validators and by the database, so not even a superuser can store more: a value
# beyond these would let one settings change mint without limit or switch a protection off.
ECONOMY_BOUNDS: dict[str, int] = {
    "signup_grant": 1_000_000,
    "daily_bonus": 100_000,
    "relief_amount": 100_000,
    "relief_below": 1_000_000,
    "relief_per_day": 10,
    "signups_per_address_per_day": 100,
    "collusion_min_rounds": 1_000,
    "collusion_days": 365,
    "collusion_min_share_percent": 100,
    "collusion_min_flow": 10_000_000,
    "mint_ceiling_signup": 1_000_000_000,
    "mint_ceiling_daily_bonus": 1_000_000_000,
    "mint_ceiling_relief": 1_000_000_000,
    "mint_ceiling_bot_funding": 100_000_000,
    "guest_grant": 100_000,
    "mint_ceiling_guest": 1_000_000_000,
    "table_fee_percent": 10,
}

# The fields that decide what the mint pays, and those that are a protection: changing either
# needs `accounts.change_economy_money` and a second economy administrator's approval
# (`accounts.services.economy_change_propose`). Together they are every setting.
ECONOMY_MONEY_FIELDS = (
    "signup_grant",
    "daily_bonus",
    "relief_amount",
    "relief_below",
    "relief_per_day",
    "guest_grant",
    "table_fee_percent",
)
# The daily ceilings of what the mint may issue, by kind (accounts.mint): a protection.
MINT_CEILING_FIELDS = (
    "mint_ceiling_signup",
    "mint_ceiling_daily_bonus",
    "mint_ceiling_relief",
    "mint_ceiling_bot_funding",
    "mint_ceiling_guest",
)
ECONOMY_PROTECTION_FIELDS = (
    "signups_per_address_per_day",
    "collusion_min_rounds",
    "collusion_days",
    "collusion_min_share_percent",
    "collusion_min_flow",
    *MINT_CEILING_FIELDS,
)
ECONOMY_GUARDED_FIELDS = ECONOMY_MONEY_FIELDS + ECONOMY_PROTECTION_FIELDS


def _at_most(field: str) -> MaxValueValidator:
    bound = ECONOMY_BOUNDS[field]
    return MaxValueValidator(bound, _("At most %(limit_value)s."))


def _coins_range(field: str) -> list[Any]:
    return [
        MinValueValidator(0, _("Enter 0 or more coins; a negative amount is not allowed.")),
        _at_most(field),
    ]


class EconomySettings(models.Model):
    """The one row of economy settings, edited in the admin (history kept).

    Read through `accounts.selectors.economy_settings`, which answers the defaults while the
    row does not exist yet; the admin creates it on first visit. `signup_grant` empty means
    "the SIGNUP_GRANT setting". Every amount is a whole number of coins; 0 turns a grant off.
    """

    SINGLETON_ID = 1

    signup_grant = models.BigIntegerField(
        _("sign-up grant"),
        null=True,
        blank=True,
        validators=_coins_range("signup_grant"),
        help_text=_("Coins a new player receives. Empty: the SIGNUP_GRANT setting."),
    )
    daily_bonus = models.BigIntegerField(
        _("daily bonus"),
        default=DEFAULT_DAILY_BONUS,
        validators=_coins_range("daily_bonus"),
        help_text=_("Coins a player may claim once per day (UTC). 0 turns the bonus off."),
    )
    relief_amount = models.BigIntegerField(
        _("relief grant"),
        default=DEFAULT_RELIEF_AMOUNT,
        validators=_coins_range("relief_amount"),
        help_text=_("Coins a broke player may claim. 0 turns relief off."),
    )
    relief_below = models.BigIntegerField(
        _("relief below"),
        default=DEFAULT_RELIEF_BELOW,
        validators=_coins_range("relief_below"),
        help_text=_("Relief may be claimed only by a player holding fewer coins than this."),
    )
    relief_per_day = models.PositiveSmallIntegerField(
        _("reliefs per day"),
        default=DEFAULT_RELIEF_PER_DAY,
        validators=[_at_most("relief_per_day")],
        help_text=_("How many times a player may claim relief per day (UTC)."),
    )
    signups_per_address_per_day = models.PositiveIntegerField(
        _("sign-ups per address per day"),
        default=DEFAULT_SIGNUPS_PER_ADDRESS_PER_DAY,
        validators=[_at_most("signups_per_address_per_day")],
        help_text=_(
            "Accounts that may be created from one IP address (an IPv6 /64 network) per day "
            "(UTC). 0: no limit."
        ),
    )
    collusion_min_rounds = models.PositiveIntegerField(
        _("collusion: shared rounds"),
        default=DEFAULT_COLLUSION_MIN_ROUNDS,
        validators=[
            MinValueValidator(1, _("At least 1 shared round.")),
            _at_most("collusion_min_rounds"),
        ],
        help_text=_("A pair is reported after at least this many settled rounds together."),
    )
    collusion_days = models.PositiveIntegerField(
        _("collusion: days"),
        default=DEFAULT_COLLUSION_DAYS,
        validators=[
            MinValueValidator(1, _("At least 1 day.")),
            _at_most("collusion_days"),
        ],
        help_text=_("The rounds of this many past days are examined."),
    )
    collusion_min_share_percent = models.PositiveSmallIntegerField(
        _("collusion: share of losses (%)"),
        default=DEFAULT_COLLUSION_MIN_SHARE_PERCENT,
        validators=[
            MinValueValidator(1, _("The share is a percentage from 1 to 100.")),
            MaxValueValidator(100, _("The share is a percentage from 1 to 100.")),
        ],
        help_text=_(
            "A pair is reported when at least this share of one player's losses in their "
            "shared rounds went, net, to the other."
        ),
    )
    collusion_min_flow = models.BigIntegerField(
        _("collusion: minimum flow"),
        default=DEFAULT_COLLUSION_MIN_FLOW,
        validators=_coins_range("collusion_min_flow"),
        help_text=_("And at least this many coins went, net, from one to the other."),
    )
    mint_ceiling_signup = models.BigIntegerField(
        _("mint ceiling: sign-up grants"),
        default=DEFAULT_MINT_CEILING_SIGNUP,
        validators=_coins_range("mint_ceiling_signup"),
        help_text=_(
            "At most this many coins of sign-up grants per day (UTC); past it sign-ups are "
            "refused until 00:00 UTC. 0 stops sign-up grants."
        ),
    )
    mint_ceiling_daily_bonus = models.BigIntegerField(
        _("mint ceiling: daily bonuses"),
        default=DEFAULT_MINT_CEILING_DAILY_BONUS,
        validators=_coins_range("mint_ceiling_daily_bonus"),
        help_text=_("At most this many coins of daily bonuses per day (UTC)."),
    )
    mint_ceiling_relief = models.BigIntegerField(
        _("mint ceiling: relief"),
        default=DEFAULT_MINT_CEILING_RELIEF,
        validators=_coins_range("mint_ceiling_relief"),
        help_text=_("At most this many coins of relief grants per day (UTC)."),
    )
    mint_ceiling_bot_funding = models.BigIntegerField(
        _("mint ceiling: bot funding"),
        default=DEFAULT_MINT_CEILING_BOT_FUNDING,
        validators=_coins_range("mint_ceiling_bot_funding"),
        help_text=_(
            "At most this many coins per day (UTC) minted into the house when its bankroll "
            "cannot fund the bots; past it no bot is seated until 00:00 UTC."
        ),
    )
    guest_grant = models.BigIntegerField(
        _("guest grant"),
        default=DEFAULT_GUEST_GRANT,
        validators=_coins_range("guest_grant"),
        help_text=_(
            "Coins a guest (playing without an account) receives. Signing up later brings the "
            "guest's total up to the sign-up grant, never past it. 0: guests get nothing, so "
            "they cannot play."
        ),
    )
    mint_ceiling_guest = models.BigIntegerField(
        _("mint ceiling: guest grants"),
        default=DEFAULT_MINT_CEILING_GUEST,
        validators=_coins_range("mint_ceiling_guest"),
        help_text=_(
            "At most this many coins of guest grants per day (UTC); past it no guest is "
            "created until 00:00 UTC."
        ),
    )
    table_fee_percent = models.PositiveSmallIntegerField(
        _("table fee (%)"),
        default=DEFAULT_TABLE_FEE_PERCENT,
        validators=[_at_most("table_fee_percent")],
        help_text=_(
            "The share of each winner's winnings in a round that goes to the house, rounded "
            "down. 0 turns the fee off."
        ),
    )
    version = models.PositiveIntegerField(
        _("version"),
        default=1,
        editable=False,
        help_text=_(
            "Raised by one with every approved change; the grants paid name the version they "
            "were paid under."
        ),
    )
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    history = HistoricalRecords(
        verbose_name=_("historical economy settings"),
        verbose_name_plural=_("historical economy settings"),
    )

    class Meta:
        verbose_name = _("economy settings")
        verbose_name_plural = _("economy settings")
        constraints = [
            models.CheckConstraint(condition=Q(id=1), name="economy_settings_singleton"),
            models.CheckConstraint(
                condition=Q(signup_grant__isnull=True) | Q(signup_grant__gte=0),
                name="economy_signup_grant_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(daily_bonus__gte=0)
                & Q(relief_amount__gte=0)
                & Q(relief_below__gte=0)
                & Q(collusion_min_flow__gte=0)
                & Q(mint_ceiling_signup__gte=0)
                & Q(mint_ceiling_daily_bonus__gte=0)
                & Q(mint_ceiling_relief__gte=0)
                & Q(mint_ceiling_bot_funding__gte=0)
                & Q(guest_grant__gte=0)
                & Q(mint_ceiling_guest__gte=0),
                name="economy_amounts_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(collusion_min_rounds__gte=1)
                & Q(collusion_days__gte=1)
                & Q(collusion_min_share_percent__gte=1)
                & Q(collusion_min_share_percent__lte=100),
                name="economy_collusion_thresholds_usable",
            ),
            models.CheckConstraint(
                condition=(
                    Q(signup_grant__isnull=True)
                    | Q(signup_grant__lte=ECONOMY_BOUNDS["signup_grant"])
                )
                & Q(
                    **{
                        f"{field}__lte": bound
                        for field, bound in ECONOMY_BOUNDS.items()
                        if field != "signup_grant"
                    }
                ),
                name="economy_values_within_bounds",
            ),
        ]
        permissions = [
            (
                "change_economy_money",
                _("Can propose and approve changes to what the mint pays and to the protections"),
            )
        ]

    def __str__(self) -> str:
        return str(_("Economy settings"))

    def clean(self) -> None:
        """Refuse settings that would make a grant unclaimable by mistake."""
        errors: dict[str, str] = {}
        if self.relief_amount and not self.relief_below:
            errors["relief_below"] = gettext(
                "With a relief grant, set the balance below which it may be claimed "
                "(or set the relief grant to 0 to turn relief off)."
            )
        if self.relief_amount and not self.relief_per_day:
            errors["relief_per_day"] = gettext(
                "With a relief grant, allow at least one a day "
                "(or set the relief grant to 0 to turn relief off)."
            )
        if errors:
            raise ValidationError(errors)

    @property
    def effective_signup_grant(self) -> int:
        """The coins a new player receives now."""
        if self.signup_grant is None:
            return int(settings.SIGNUP_GRANT)
        return self.signup_grant


class EconomyChangeStatus(models.TextChoices):
    PENDING = "pending", _("Pending approval")
    APPLIED = "applied", _("Approved and applied")


class EconomyChange(models.Model):
    """A proposed change to the economy settings: stored until another economy administrator
    approves it (`accounts.services.economy_change_approve`), which applies it and raises the
    settings' version. Until then the settings, and every grant paid, stay as they were.

    `values` maps each changed field to its proposed value (JSON; `signup_grant` may be null).
    """

    values = models.JSONField(_("proposed values"))
    status = models.CharField(
        _("status"),
        max_length=16,
        choices=EconomyChangeStatus.choices,
        default=EconomyChangeStatus.PENDING,
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("proposed by"),
        on_delete=models.PROTECT,
        related_name="+",
    )
    proposed_at = models.DateTimeField(_("proposed at"), auto_now_add=True)
    # Why the proposer wants the change, shown to the approver (may be empty).
    reason = models.CharField(_("reason for the change"), max_length=200, blank=True, default="")
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("approved by"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    applied_at = models.DateTimeField(_("applied at"), null=True, blank=True)
    applied_version = models.PositiveIntegerField(
        _("settings version applied"), null=True, blank=True
    )

    class Meta:
        verbose_name = _("economy change")
        verbose_name_plural = _("economy changes")
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True) | ~Q(approved_by=models.F("proposed_by")),
                name="economy_change_approved_by_another",
            ),
        ]

    def __str__(self) -> str:
        return gettext("Economy change #%(id)s") % {"id": self.pk}


class SignupQuota(models.Model):
    """Accounts created from one address (an IPv4 address or an IPv6 /64) on one UTC day.

    Taken under a row lock by `user_signup`, in the same transaction that creates the user, so
    the count is exact: a refused or failed sign-up leaves it unchanged.
    """

    address = models.CharField(_("address"), max_length=64)
    day = models.DateField(_("day (UTC)"))
    count = models.PositiveIntegerField(_("sign-ups"), default=0)

    class Meta:
        verbose_name = _("sign-ups by address")
        verbose_name_plural = _("sign-ups by address")
        ordering = ["-day", "-count"]
        constraints = [
            models.UniqueConstraint(fields=["address", "day"], name="signup_quota_one_per_day")
        ]

    def __str__(self) -> str:
        return f"{self.address} {self.day}: {self.count}"


class MintKind(models.TextChoices):
    """What the mint issues coins for, each under its own daily ceiling (EconomySettings'
    `mint_ceiling_<kind>`). A staff adjustment is not counted: a named person made it."""

    SIGNUP = "signup", _("Sign-up grants")
    DAILY_BONUS = "daily_bonus", _("Daily bonuses")
    RELIEF = "relief", _("Relief grants")
    BOT_FUNDING = "bot_funding", _("Bot funding (into the house)")
    GUEST = "guest", _("Guest grants")


class MintDay(models.Model):
    """The coins minted of one kind on one UTC day, against that day's ceiling.

    Written only by `accounts.mint.mint_budget_take`, under a row lock in the transaction that
    mints, so concurrent claims cannot overshoot the ceiling and a rolled-back claim does not
    count; `ceiling` is the ceiling it was last checked against. A refusal writes nothing here
    (it rolls back with the claim): `accounts.mint` raises the alert in the cache instead.
    """

    day = models.DateField(_("day (UTC)"))
    kind = models.CharField(_("kind"), max_length=16, choices=MintKind.choices)
    minted = models.BigIntegerField(_("coins minted"), default=0)
    ceiling = models.BigIntegerField(_("ceiling"), default=0)

    class Meta:
        verbose_name = _("mint report")
        verbose_name_plural = _("mint report")
        ordering = ["-day", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["day", "kind"], name="mint_day_one_per_kind"),
            models.CheckConstraint(
                condition=Q(kind__in=MintKind.values), name="mint_day_kind_known"
            ),
            models.CheckConstraint(condition=Q(minted__gte=0), name="mint_day_minted_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.kind}: {self.minted}/{self.ceiling}"


class TransferFreeze(models.Model):
    """One staff action on a player's transfers: frozen pending review, or unfrozen; who, when
    and why (the note is required). Written with the user's ``transfers_frozen_*`` fields by
    ``accounts.collusion.transfers_freeze`` / ``transfers_unfreeze``; never changed after."""

    class Action(models.TextChoices):
        FREEZE = "freeze", _("frozen")
        UNFREEZE = "unfreeze", _("unfrozen")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("player"),
        on_delete=models.PROTECT,
        related_name="transfer_freezes",
    )
    action = models.CharField(_("action"), max_length=8, choices=Action.choices)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("by"), on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField(_("at"), db_default=Now())
    note = models.TextField(_("note"))
    flag = models.ForeignKey(
        "CollusionFlag",
        verbose_name=_("collusion flag"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="freezes",
    )

    class Meta:
        verbose_name = _("transfer freeze")
        verbose_name_plural = _("transfer freezes")
        ordering = ["-at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(action__in=["freeze", "unfreeze"]), name="transfer_freeze_action_known"
            ),
            models.CheckConstraint(condition=~Q(note=""), name="transfer_freeze_note_given"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.action} {self.at:%Y-%m-%d %H:%M}"


class CollusionReason(models.TextChoices):
    """Why a pair is flagged (``CollusionFlag.reasons``: one or more)."""

    DELIBERATE_PLAY = "deliberate_play", _("deliberate play")
    NEW_ACCOUNT = "new_account", _("new account")
    SHARED_ADDRESS = "shared_address", _("shared address")
    COIN_FLOW = "coin_flow", _("coin flow")
    VOLUME = "volume", _("volume over the thresholds")


class CollusionStatus(models.TextChoices):
    OPEN = "open", _("Open")
    REVIEWED = "reviewed", _("Reviewed")
    DISMISSED = "dismissed", _("Dismissed")


class CollusionFlag(models.Model):
    """A pair of players whose shared rounds moved coins one way: `loser` -> `winner`.

    Written by `games.history.collusion.collusion_scan` (hourly) and updated in place each time the
    pair is found again; the numbers describe the scan's window (the last `collusion_days`).
    `flow` is the net coins from loser to winner in their shared settled rounds, `losses` all
    the coins the loser paid in those rounds, `share_percent` = flow / losses. The play's
    evidence (`games.rules.dumping.pair_verdict`): `score` against `threshold`, `water_given`
    and `evidence`, one row per round of the run that reached the score (round id, settled_at,
    room, sign, better_share, regret, water given to the winner, coins loser -> winner);
    `reasons` lists `CollusionReason` values; `ring` names the group of open flags linked
    through shared accounts. Support sets `status` and `note`; a scan never
    changes them.
    """

    loser = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("losing player"),
        on_delete=models.PROTECT,
        related_name="+",
    )
    winner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("winning player"),
        on_delete=models.PROTECT,
        related_name="+",
    )
    shared_rounds = models.PositiveIntegerField(_("shared rounds"))
    flow = models.BigIntegerField(_("net flow (coins)"))
    losses = models.BigIntegerField(_("loser's losses (coins)"))
    share_percent = models.DecimalField(_("share of losses (%)"), max_digits=5, decimal_places=1)
    first_round_at = models.DateTimeField(_("first shared round"))
    last_round_at = models.DateTimeField(_("last shared round"))
    score = models.FloatField(_("evidence of deliberate play"), default=0.0)
    threshold = models.FloatField(_("evidence needed"), default=0.0)
    water_given = models.IntegerField(_("water given away"), default=0)
    evidence = models.JSONField(_("evidence rounds"), default=list, blank=True)
    reasons = models.JSONField(_("reasons"), default=list, blank=True)
    # The group of open flags this one is linked to through shared accounts
    # (`games.rules.dumping.rings`), named by the group's smallest user id; set by the scan.
    ring = models.BigIntegerField(_("ring"), null=True, blank=True, db_index=True)
    status = models.CharField(
        _("status"),
        max_length=16,
        choices=CollusionStatus.choices,
        default=CollusionStatus.OPEN,
    )
    note = models.TextField(_("note"), blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("reviewer"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    reviewed_at = models.DateTimeField(_("reviewed at"), null=True, blank=True)
    flagged_at = models.DateTimeField(_("first flagged"), db_default=Now(), editable=False)
    updated_at = models.DateTimeField(_("last found"))

    class Meta:
        verbose_name = _("collusion flag")
        verbose_name_plural = _("collusion flags")
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["loser", "winner"], name="collusion_flag_one_per_pair"),
            models.CheckConstraint(
                condition=~Q(loser=models.F("winner")), name="collusion_flag_two_players"
            ),
            models.CheckConstraint(
                condition=Q(status__in=CollusionStatus.values), name="collusion_flag_status_known"
            ),
        ]

    def __str__(self) -> str:
        return gettext("%(loser)s to %(winner)s") % {"loser": self.loser, "winner": self.winner}
