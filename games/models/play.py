"""Tables, their event log, the rounds played at them and duplicate matches."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from games.models.rules import RuleConfiguration
from games.table.events import ALL, NOBODY, Event


class Table(models.Model):
    """The live table of a room: the pure machine's state (``TableState.to_dict``), saved under
    the row lock by :mod:`games.live.services` only.

    ``version``, ``phase`` and ``deadline`` repeat what the state holds, so the sweeper can find
    overdue deadlines with an index and a timeout can be checked without parsing the state.
    ``state`` holds secrets (every hand, the deck, its salt): never send it to a client.
    """

    room = models.OneToOneField(
        "lobby.Room", verbose_name=_("room"), on_delete=models.PROTECT, related_name="table"
    )
    state = models.JSONField(_("state"))
    version = models.PositiveIntegerField(_("version"), default=0)
    phase = models.CharField(_("phase"), max_length=16, default="waiting")
    deadline = models.DateTimeField(_("deadline"), null=True, blank=True, db_index=True)
    # Spectators' sockets open on this table: its public events go to their group
    # only when some watch.
    watchers = models.PositiveIntegerField(_("watchers"), default=0)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("table")
        verbose_name_plural = _("tables")
        ordering = ["id"]

    def __str__(self) -> str:
        return f"table {self.pk} ({self.phase} v{self.version})"


class TableEvent(models.Model):
    """One event of a table's log (``games.table.events.Event``), kept for replay.

    A public event has ``recipient`` None. A private one has the id of the one player who may
    see it in ``recipient`` (and, for reading the log, that player's seat position in
    ``audience``). Private events logged before they were addressed to players have an empty
    ``recipient``: nobody is shown them.
    """

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="events")
    version = models.PositiveIntegerField(_("version"))
    type = models.CharField(_("type"), max_length=32)
    audience = models.PositiveSmallIntegerField(_("audience"), null=True, blank=True)
    recipient = models.CharField(_("recipient"), max_length=64, null=True, blank=True)
    payload = models.JSONField(_("payload"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("table event")
        verbose_name_plural = _("table events")
        ordering = ["table", "version"]
        constraints = [
            models.UniqueConstraint(fields=["table", "version"], name="one_table_event_per_version")
        ]

    def __str__(self) -> str:
        return f"{self.table_id} v{self.version} {self.type}"

    def as_event(self) -> Event:
        """The event as the machine made it (a private one addressed to its player)."""
        if self.recipient is None and self.audience is None:
            return Event(self.version, self.type, self.payload, ALL)
        return Event(self.version, self.type, self.payload, self.recipient or NOBODY)


class Round(models.Model):
    """One round played at a table, kept for audit.

    ``config`` is the rules the round was played under (``RuleConfig.to_dict``). ``commitment``
    (SHA-256 of deck text and salt) is stored at the deal; ``deck`` and ``salt`` only at
    settlement, when they are revealed. ``result`` is ``api.result_json`` (with positions): the
    per-pair breakdown, transfers, cuts and penalties. ``balances`` are the wallets' balances it
    was settled with (they decide the cannot-cover cuts; :mod:`games.history.audit` recomputes with
    them).
    ``transaction`` is the settlement posting (None when nobody won or lost a coin).
    """

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="rounds")
    number = models.PositiveIntegerField(_("number"))
    config = models.JSONField(_("rules snapshot"))
    commitment = models.CharField(_("deck commitment"), max_length=64)
    deck = models.TextField(_("deck"), blank=True)
    salt = models.CharField(_("salt"), max_length=64, blank=True)
    started_at = models.DateTimeField(_("started at"))
    settled_at = models.DateTimeField(_("settled at"), null=True, blank=True)
    result = models.JSONField(_("result"), null=True, blank=True)
    balances = models.JSONField(
        _("balances before settlement"),
        null=True,
        blank=True,
        help_text=_("Each player's wallet balance (user id -> coins) the round was settled with."),
    )
    transaction = models.ForeignKey(
        "accounts.Transaction",
        verbose_name=_("settlement transaction"),
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    # Whether the standings job (games.history.standings) has added the settled round to the
    # players'
    # standings: each round is counted once, so the job reads only the rounds settled since.
    standings_counted = models.BooleanField(
        _("counted in the standings"), default=False, db_default=False, editable=False
    )
    # Whether the collusion scan (games.history.collusion) has judged the play of the settled
    # round's people (``RoundPlayer.quality``): each round is judged once.
    play_checked = models.BooleanField(
        _("play judged"), default=False, db_default=False, editable=False
    )

    # Whether the skill rating (games.history.rating) has been updated from the settled round:
    # each round rates its players once.
    rating_counted = models.BooleanField(
        _("counted in the ratings"), default=False, db_default=False, editable=False
    )

    class Meta:
        verbose_name = _("round")
        verbose_name_plural = _("rounds")
        ordering = ["table", "number"]
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="one_round_per_number")
        ]
        indexes = [
            # The rounds the standings job has still to count (few: those settled since it ran).
            models.Index(
                fields=["id"],
                name="round_standings_uncounted",
                condition=models.Q(settled_at__isnull=False, standings_counted=False),
            ),
            # The rounds the rating's catch-up has still to rate.
            models.Index(
                fields=["id"],
                name="round_rating_uncounted",
                condition=models.Q(settled_at__isnull=False, rating_counted=False),
            ),
            # The rounds the collusion scan has still to judge.
            models.Index(
                fields=["settled_at"],
                name="round_play_unchecked",
                condition=models.Q(settled_at__isnull=False, play_checked=False),
            ),
        ]

    def __str__(self) -> str:
        return gettext("table %(table)s, round %(number)s") % {
            "table": self.table_id,
            "number": self.number,
        }


class RoundPlayer(models.Model):
    """A player of a round: the cards dealt (at the deal: 13, or 16 with spare cards), and at
    settlement how the hand was played (``arrangement``, ``special``, ``unused``: the spare
    cards set aside, ``auto``, ``escaped``) and what it won: water,
    ``delta`` (coins, penalty included) and the escape ``penalty`` paid to the house."""

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="players")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="round_players"
    )
    position = models.PositiveSmallIntegerField(_("position"))
    cards = models.CharField(_("cards"), max_length=64)
    unused = models.CharField(
        _("cards set aside"),
        max_length=16,
        blank=True,
        help_text=_("With spare cards (RULES.md §12.4): the 3 cards not played."),
    )
    special = models.CharField(_("special hand played"), max_length=32, blank=True)
    arrangement = models.JSONField(_("arrangement"), null=True, blank=True)
    auto = models.CharField(_("played automatically"), max_length=16, blank=True)
    escaped = models.BooleanField(_("escaped"), default=False)
    water = models.IntegerField(_("water"), default=0)
    delta = models.BigIntegerField(_("coins won or lost"), default=0)
    penalty = models.BigIntegerField(_("escape penalty"), default=0)
    # A person's arrangement judged against every split of its cards by the collusion scan
    # (games.rules.dumping.PlayQuality.to_json); None for bots and rounds of fewer than two
    # people, and until the scan has read the round.
    quality = models.JSONField(_("play quality"), null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("round player")
        verbose_name_plural = _("round players")
        ordering = ["round", "position"]
        constraints = [
            models.UniqueConstraint(fields=["round", "position"], name="one_player_per_position")
        ]

    def __str__(self) -> str:
        return f"{self.round} #{self.position}"


class RoundStaffAction(models.Model):
    """A staff member's action on the account of a player who was in this round, unsettled, at
    the time: ``actions`` names what was done (``password``, ``email``, ``is_active``,
    ``reset_link``: a password reset link sent). The round's audit shows it. Written by
    :mod:`games.live.staff_marks` when the accounts admin says so."""

    class Action(models.TextChoices):
        PASSWORD = "password", _("password changed")
        EMAIL = "email", _("e-mail address changed")
        ACTIVE = "is_active", _("active flag changed")
        RESET_LINK = "reset_link", _("password reset link sent")

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="staff_actions")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("player"),
        on_delete=models.PROTECT,
        related_name="+",
    )
    staff = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("staff member"),
        on_delete=models.PROTECT,
        null=True,
        related_name="+",
    )
    actions = models.JSONField(_("actions"))
    at = models.DateTimeField(_("at"))

    class Meta:
        verbose_name = _("staff action during a round")
        verbose_name_plural = _("staff actions during rounds")
        ordering = ["round", "at", "pk"]

    def __str__(self) -> str:
        return f"{self.round}: {', '.join(self.actions)}"

    def actions_display(self) -> str:
        labels = dict(self.Action.choices)
        return ", ".join(str(labels.get(action, action)) for action in self.actions)


# A duplicate match's size: enough tables to compare a hand several times, few enough
# for one lobby page; deals as in a short duplicate session.
MATCH_TABLES = (2, 3, 4)
MATCH_MAX_DEALS = 24


class MatchStatus(models.TextChoices):
    PLAYING = "playing", _("playing")
    FINISHED = "finished", _("finished")
    ABANDONED = "abandoned", _("abandoned")


class DuplicateMatch(models.Model):
    """A duplicate match (复式赛): ``tables`` rooms (``Room.match``) with the same rules,
    base score and seats play the same ``deals`` deals in lockstep, so players who held the
    same cards can be compared (:mod:`games.live.duplicate`).

    Every deal is derived from ``seed`` (secret until the match ends: never shown, nor in the
    admin, before ``finished_at``); ``seed_commitment`` (SHA-256 of the seed) is public from
    the start, so anyone can check afterwards that all the deals were fixed before the first
    (``games.table.deck.seeded_deck``).
    """

    name = models.CharField(_("name"), max_length=40)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        on_delete=models.PROTECT,
        related_name="owned_matches",
    )
    rules = models.ForeignKey(
        RuleConfiguration,
        verbose_name=_("rule configuration"),
        on_delete=models.PROTECT,
        related_name="matches",
    )
    base_score = models.PositiveIntegerField(_("base score (底分)"))
    seats = models.PositiveSmallIntegerField(_("seats per table"))
    tables = models.PositiveSmallIntegerField(_("tables"))
    deals = models.PositiveSmallIntegerField(_("deals"))
    seed = models.CharField(_("seed"), max_length=64, editable=False)
    seed_commitment = models.CharField(_("seed commitment"), max_length=64, editable=False)
    status = models.CharField(
        _("status"), max_length=10, choices=MatchStatus.choices, default=MatchStatus.PLAYING
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        verbose_name = _("duplicate match")
        verbose_name_plural = _("duplicate matches")
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(tables__in=MATCH_TABLES), name="games_match_tables_2_to_4"
            ),
            models.CheckConstraint(
                condition=models.Q(deals__gte=1, deals__lte=MATCH_MAX_DEALS),
                name="games_match_deals_in_range",
            ),
            models.CheckConstraint(
                condition=models.Q(status=MatchStatus.PLAYING, finished_at__isnull=True)
                | (~models.Q(status=MatchStatus.PLAYING) & models.Q(finished_at__isnull=False)),
                name="games_match_finished_at_iff_over",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def seed_revealed(self) -> str | None:
        """The seed, once the match is over (None before)."""
        return self.seed if self.status != MatchStatus.PLAYING else None
