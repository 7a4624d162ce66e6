"""Persistence of rule configurations (and, later, rounds and settlements).

The rules themselves live in :mod:`games.rules`; a stored configuration only ever becomes the
engine's frozen ``RuleConfig`` through :meth:`RuleConfiguration.engine_config`, and is validated
by the engine (one source of truth).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from games.labels import special_name
from games.rules.config import DEFAULT_CONFIG, SPECIAL_INFO, RuleConfig
from games.table.events import ALL, NOBODY, Event

SPECIAL_CHOICES = [(s.id, f"{s.zh} {s.en}") for s in SPECIAL_INFO]

# Model field -> key of the engine's row_bonus table.
ROW_BONUS_FIELDS = {
    "bonus_front_trips": "front.trips",
    "bonus_middle_full_house": "middle.full_house",
    "bonus_middle_quads": "middle.quads",
    "bonus_middle_straight_flush": "middle.straight_flush",
    "bonus_back_quads": "back.quads",
    "bonus_back_straight_flush": "back.straight_flush",
    "bonus_middle_five_of_a_kind": "middle.five_of_a_kind",
    "bonus_back_five_of_a_kind": "back.five_of_a_kind",
}
# Plain fields copied one to one between the model and the engine's configuration.
PLAIN_FIELDS = (
    "a2345",
    "run_over_counts_as_gun",
    "gun_mode",
    "gun_water",
    "home_run_water",
    "home_run_min_players",
    "base_score",
    "escape_penalty_multiplier",
    "escape_covers_losses",
    "ready_seconds",
    "special_choice_seconds",
    "arrange_seconds",
    "deal_mode",
    "deal_interval_ms",
    "compare_mode",
    "reveal_interval_ms",
    "extra_suits",
    "jokers",
    "spare_cards",
)
_D = DEFAULT_CONFIG
_BONUS = dict(_D.row_bonus)


class RuleConfiguration(models.Model):
    """An admin-editable rule set (RULES.md §5–8); rooms point at one."""

    name = models.CharField(_("name"), max_length=80, unique=True)
    description = models.TextField(_("description"), blank=True)
    is_default = models.BooleanField(
        _("default"),
        default=False,
        help_text=_(
            "Used for quick-join and new rooms. Exactly one configuration is the default: "
            "making this one the default stops the previous one being it."
        ),
    )

    a2345 = models.CharField(
        _("A2345 straight"),
        max_length=10,
        choices=[("lowest", _("lowest straight")), ("second", _("second-highest straight"))],
        default=_D.a2345,
        help_text=_("Where A-2-3-4-5 ranks among straights (RULES.md §3.1)."),
    )
    bonus_front_trips = models.PositiveIntegerField(
        _("front trips bonus (冲三)"),
        default=_BONUS["front.trips"],
        help_text=_("Extra water for winning the front row with trips (RULES.md §7.1); 0: none."),
    )
    bonus_middle_full_house = models.PositiveIntegerField(
        _("middle full house bonus (中墩葫芦)"),
        default=_BONUS["middle.full_house"],
        help_text=_("Extra water for winning the middle row with a full house."),
    )
    bonus_middle_quads = models.PositiveIntegerField(
        _("middle quads bonus"),
        default=_BONUS["middle.quads"],
        help_text=_("Extra water for winning the middle row with four of a kind."),
    )
    bonus_middle_straight_flush = models.PositiveIntegerField(
        _("middle straight flush bonus"),
        default=_BONUS["middle.straight_flush"],
        help_text=_("Extra water for winning the middle row with a straight flush."),
    )
    bonus_back_quads = models.PositiveIntegerField(
        _("back quads bonus"),
        default=_BONUS["back.quads"],
        help_text=_("Extra water for winning the back row with four of a kind."),
    )
    bonus_back_straight_flush = models.PositiveIntegerField(
        _("back straight flush bonus"),
        default=_BONUS["back.straight_flush"],
        help_text=_("Extra water for winning the back row with a straight flush."),
    )
    bonus_middle_five_of_a_kind = models.PositiveIntegerField(
        _("middle five of a kind bonus (五同)"),
        default=_BONUS["middle.five_of_a_kind"],
        help_text=_(
            "Extra water for winning the middle row with five of a kind (only with extra "
            "suits or jokers, RULES.md §12.3)."
        ),
    )
    bonus_back_five_of_a_kind = models.PositiveIntegerField(
        _("back five of a kind bonus (五同)"),
        default=_BONUS["back.five_of_a_kind"],
        help_text=_("Extra water for winning the back row with five of a kind (§12.3)."),
    )
    run_over_counts_as_gun = models.BooleanField(
        _("run-over counts as a gun (辗过)"),
        default=_D.run_over_counts_as_gun,
        help_text=_(
            "Winning one row and tying two, or winning two and tying one, scores as a gun "
            "(RULES.md §7.2)."
        ),
    )
    gun_mode = models.CharField(
        _("gun payment"),
        max_length=10,
        choices=[("fixed", _("fixed water")), ("double", _("double the water"))],
        default=_D.gun_mode,
        help_text=_(
            "Fixed: each gunned player pays the gun water (the home run water in a home run). "
            "Double: the pair's row water is doubled, and doubled again in a home run."
        ),
    )
    gun_water = models.PositiveIntegerField(
        _("gun water (打枪)"),
        default=_D.gun_water,
        help_text=_("Fixed payment only: water a gunned player pays on top of the rows."),
    )
    home_run_water = models.PositiveIntegerField(
        _("home run water (全垒打)"),
        default=_D.home_run_water,
        help_text=_("Fixed payment only: water each player pays instead, in a home run."),
    )
    home_run_min_players = models.PositiveSmallIntegerField(
        _("home run minimum players"),
        default=_D.home_run_min_players,
        help_text=_("A home run needs at least this many players in the round (2 to 5)."),
    )
    base_score = models.PositiveIntegerField(
        _("default base score (底分)"),
        default=_D.base_score,
        help_text=_("Coins per water, for rooms that do not set their own (RULES.md §7.4)."),
    )
    escape_penalty_multiplier = models.PositiveIntegerField(
        _("escape penalty × base score"),
        null=True,
        blank=True,
        help_text=_("Empty: 5, or 10 when the escaper covers the losses (RULES.md §7.5)."),
    )
    escape_covers_losses = models.BooleanField(
        _("escaper covers other losers"),
        default=_D.escape_covers_losses,
        help_text=_("The escaper also pays every other loser's losses for the round."),
    )
    ready_seconds = models.PositiveIntegerField(
        _("ready time (s)"),
        default=_D.ready_seconds,
        help_text=_("A seated player who does not press Ready in time goes back to the rooms."),
    )
    special_choice_seconds = models.PositiveIntegerField(
        _("special-hand choice time (s)"),
        default=_D.special_choice_seconds,
        help_text=_("Time to choose to play a special hand; a timeout counts as Yes (§5.1)."),
    )
    arrange_seconds = models.PositiveIntegerField(
        _("arrange time (s)"),
        default=_D.arrange_seconds,
        help_text=_("Time to arrange the rows; the server auto-arranges at the deadline."),
    )
    deal_mode = models.CharField(
        _("deal mode"),
        max_length=12,
        choices=[("sequential", _("one at a time")), ("simultaneous", _("all at once"))],
        default=_D.deal_mode,
        help_text=_("Deal one card at a time to each player in turn, or to all at once."),
    )
    deal_interval_ms = models.PositiveIntegerField(
        _("deal interval (ms)"),
        default=_D.deal_interval_ms,
        help_text=_("Pace of the deal animation, per card."),
    )
    compare_mode = models.CharField(
        _("compare mode"),
        max_length=12,
        choices=[("sequential", _("one at a time")), ("simultaneous", _("all at once"))],
        default=_D.compare_mode,
        help_text=_("Reveal each row's hands one player at a time, or all at once."),
    )
    reveal_interval_ms = models.PositiveIntegerField(
        _("reveal interval (ms)"),
        default=_D.reveal_interval_ms,
        help_text=_("Pace of the comparison animation, per reveal."),
    )
    extra_suits = models.PositiveSmallIntegerField(
        _("extra suits (多一色)"),
        choices=[
            (0, _("none (52 cards)")),
            (1, _("one extra diamond suit (65 cards)")),
            (2, _("two extra diamond suits (78 cards)")),
        ],
        default=_D.extra_suits,
        help_text=_(
            "Extra suits of diamonds, A to K (RULES.md §12.1): up to 5 seats with one, 6 with two."
        ),
    )
    jokers = models.PositiveSmallIntegerField(
        _("jokers (癞子)"),
        choices=[(0, _("none")), (2, _("red and black joker (大王, 小王)"))],
        default=_D.jokers,
        help_text=_("Wild cards: a joker stands for any card in its row (RULES.md §12.2)."),
    )
    spare_cards = models.PositiveSmallIntegerField(
        _("spare cards (多三张)"),
        choices=[(0, _("none (13 cards each)")), (3, _("three (16 cards each, play 13)"))],
        default=_D.spare_cards,
        help_text=_(
            "Each player is dealt 16 cards and plays any 13 of them (RULES.md §12.4); a room "
            "needs 16 cards per seat."
        ),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    history = HistoricalRecords(
        verbose_name=_("historical rule configuration"),
        verbose_name_plural=_("historical rule configurations"),
    )

    class Meta:
        verbose_name = _("rule configuration")
        verbose_name_plural = _("rule configurations")
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"],
                condition=models.Q(is_default=True),
                name="one_default_rule_configuration",
            )
        ]

    def __str__(self) -> str:
        return self.name

    def engine_dict(self, specials: list[SpecialHandSetting] | None = None) -> dict[str, Any]:
        """The engine's JSON form of this configuration (specials from the database unless
        given, e.g. by an admin form that has not saved them yet)."""
        rows = specials if specials is not None else list(self.special_hands.all())
        rows = sorted(rows, key=lambda s: (s.order, s.special))
        data: dict[str, Any] = {name: getattr(self, name) for name in PLAIN_FIELDS}
        data["row_bonus"] = {key: getattr(self, f) for f, key in ROW_BONUS_FIELDS.items()}
        data["specials"] = {s.special: {"enabled": s.enabled, "water": s.water} for s in rows}
        data["special_order"] = [s.special for s in rows]
        return data

    def engine_config(self) -> RuleConfig:
        """The frozen engine value; raises ConfigError if the stored rules are invalid."""
        return RuleConfig.from_dict(self.engine_dict())

    def snapshot(self) -> dict[str, Any]:
        """The rules as they are now, as the engine's canonical JSON (``RuleConfig.to_dict``).

        A round stores this when it begins and is played and settled by it alone, so editing
        the configuration afterwards never changes a round in progress or one already played.
        """
        return self.engine_config().to_dict()

    @staticmethod
    def engine_config_from_snapshot(snapshot: dict[str, Any]) -> RuleConfig:
        """The frozen engine value of a :meth:`snapshot`; raises ConfigError if it is invalid.

        A snapshot lists every field, so it does not depend on the engine's defaults.
        """
        return RuleConfig.from_dict(snapshot)

    def entry_minimum(self, base_score: int | None = None) -> int:
        """Coins needed to sit down (RULES.md §7.4) at ``base_score`` (default: this one's)."""
        config = self.engine_config()
        top = max((s.water for s in config.enabled_specials), default=0)
        return top * (self.base_score if base_score is None else base_score) * 3

    @classmethod
    def from_engine(cls, config: RuleConfig, **fields: Any) -> RuleConfiguration:
        """A saved configuration (with its special-hand rows) equal to ``config``."""
        data = config.to_dict()
        values = {name: data[name] for name in PLAIN_FIELDS}
        values.update({f: data["row_bonus"][key] for f, key in ROW_BONUS_FIELDS.items()})
        obj = cls.objects.create(**values, **fields)
        SpecialHandSetting.objects.bulk_create(
            SpecialHandSetting(
                configuration=obj,
                special=sid,
                enabled=data["specials"][sid]["enabled"],
                water=data["specials"][sid]["water"],
                order=position,
            )
            for position, sid in enumerate(data["special_order"], start=1)
        )
        return obj


class SpecialHandSetting(models.Model):
    """One special hand of a configuration: enabled, its water, its place in the ranking."""

    configuration = models.ForeignKey(
        RuleConfiguration, on_delete=models.CASCADE, related_name="special_hands"
    )
    special = models.CharField(_("special hand"), max_length=32, choices=SPECIAL_CHOICES)
    enabled = models.BooleanField(_("enabled"), default=True)
    water = models.PositiveIntegerField(_("water (水)"))
    order = models.PositiveSmallIntegerField(
        _("rank"), help_text=_("1 is the highest special hand.")
    )

    history = HistoricalRecords(
        verbose_name=_("historical special hand"),
        verbose_name_plural=_("historical special hands"),
    )

    class Meta:
        verbose_name = _("special hand")
        verbose_name_plural = _("special hands")
        ordering = ["configuration", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["configuration", "special"], name="one_setting_per_special"
            ),
            models.UniqueConstraint(fields=["configuration", "order"], name="one_special_per_rank"),
        ]

    def __str__(self) -> str:
        # The name in the reader's language (the choices' label has both, for the migrations).
        return f"{special_name(self.special)} ({self.water})"


# -- tables and rounds -------------------------------------------------------------------------


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
    # Spectators' sockets open on this table (issue 18): its public events go to their group
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
            )
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

    class Meta:
        verbose_name = _("round player")
        verbose_name_plural = _("round players")
        ordering = ["round", "position"]
        constraints = [
            models.UniqueConstraint(fields=["round", "position"], name="one_player_per_position")
        ]

    def __str__(self) -> str:
        return f"{self.round} #{self.position}"


# A duplicate match's size (issue 17): enough tables to compare a hand several times, few enough
# for one lobby page; deals as in a short duplicate session.
MATCH_TABLES = (2, 3, 4)
MATCH_MAX_DEALS = 24


class MatchStatus(models.TextChoices):
    PLAYING = "playing", _("playing")
    FINISHED = "finished", _("finished")
    ABANDONED = "abandoned", _("abandoned")


class DuplicateMatch(models.Model):
    """A duplicate match (复式赛, issue 17): ``tables`` rooms (``Room.match``) with the same rules,
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


class StandingPeriod(models.TextChoices):
    WEEK = "week", _("this week")
    ALL = "all", _("all time")


class Standing(models.Model):
    """A player's statistics over a period (issue 18), counted by the beat job
    ``games.live.tasks.compute_standings`` (``games.history.standings``), never on request: the
    rounds
    settled this week (since Monday 00:00 UTC) or ever, their water and coins, the guns fired
    and suffered, the home runs, the specials declared, the hands played automatically (a
    timeout or a disconnection) and the escapes. Bots have none."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="standings"
    )
    period = models.CharField(_("period"), max_length=8, choices=StandingPeriod.choices)
    rounds = models.PositiveIntegerField(_("rounds"), default=0)
    water = models.IntegerField(_("water"), default=0)
    coins = models.BigIntegerField(_("net coins"), default=0)
    guns = models.PositiveIntegerField(_("guns fired"), default=0)
    shot = models.PositiveIntegerField(_("guns suffered"), default=0)
    home_runs = models.PositiveIntegerField(_("home runs"), default=0)
    specials = models.PositiveIntegerField(_("specials declared"), default=0)
    auto = models.PositiveIntegerField(_("hands played automatically"), default=0)
    escapes = models.PositiveIntegerField(_("escapes"), default=0)
    computed_at = models.DateTimeField(_("computed at"))  # the run that last changed the row

    class Meta:
        verbose_name = _("standing")
        verbose_name_plural = _("standings")
        constraints = [
            models.UniqueConstraint(fields=["user", "period"], name="one_standing_per_period")
        ]
        indexes = [models.Index(fields=["period", "rounds"])]

    @property
    def water_per_round(self) -> float:
        return self.water / self.rounds if self.rounds else 0.0


class StandingsRun(models.Model):
    """One run of the standings job: when, how many newly settled rounds it counted, how many
    standing rows it wrote, and whether it recounted every round (``full``). The pages' "computed
    at" is the last run's time: a standing row changes only when its player has played since."""

    ran_at = models.DateTimeField(_("ran at"), db_index=True)
    rounds = models.PositiveIntegerField(_("rounds counted"), default=0)
    rows = models.PositiveIntegerField(_("rows written"), default=0)
    full = models.BooleanField(_("full recount"), default=False)

    class Meta:
        verbose_name = _("standings run")
        verbose_name_plural = _("standings runs")
        ordering = ["-ran_at"]

    def __str__(self) -> str:
        return f"{self.ran_at:%Y-%m-%d %H:%M:%S} {self.rounds} rounds"
