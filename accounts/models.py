"""Users and the coin ledger.

The ledger is double-entry and append-only. An `Account` holds coins: one wallet per player,
plus the system accounts (the mint, which issues grants and therefore goes negative, and the
house, which receives escape penalties). A `Transaction` is one movement of coins, made of
`Entry` rows whose amounts sum to zero. Rows are written only by `accounts.services.ledger_post`;
the database rejects updates and deletes of transactions and entries, unbalanced transactions
and negative wallets (migration 0003), so a bug or a hand-written SQL statement cannot create or
destroy coins.
"""

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


class User(AbstractUser):
    """A player or an operator.

    A custom user model from the first migration, so that fields can be added later without
    rewriting every foreign key to the user table. ``is_bot``: a bot player (games.bots),
    seated and played by the platform; it has an unusable password and never logs in.
    """

    is_bot = models.BooleanField(
        _("bot"),
        default=False,
        help_text=_("A bot player, played by the platform; it cannot log in."),
    )


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


# Kinds whose transactions must say why they were made.
KINDS_NEEDING_A_REASON = (TransactionKind.ADMIN_ADJUSTMENT, TransactionKind.REVERSAL)


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
