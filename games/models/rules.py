"""Rule configurations as stored and edited: each becomes the engine's frozen ``RuleConfig``
only through :meth:`RuleConfiguration.engine_config`, and the engine validates it (one source
of truth)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from games.labels import special_name
from games.rules.config import DEFAULT_CONFIG, SPECIAL_INFO, RuleConfig
from games.rules.errors import ConfigError
from games.rules.presets import PRESETS, preset_of

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
    "row_water",
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
    "reconnect_grace_seconds",
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
    """An admin-editable rule set (RULES.md §5–9); rooms point at one."""

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

    is_draft = models.BooleanField(
        _("draft"),
        default=False,
        help_text=_(
            "A draft is tried, not played: no room, table or quick play can use it until it "
            "is published. A draft is never the default."
        ),
    )
    published_at = models.DateTimeField(_("published at"), null=True, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("published by"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    publish_reason = models.CharField(_("reason for publishing"), max_length=100, blank=True)

    a2345 = models.CharField(
        _("A2345 straight"),
        max_length=10,
        choices=[("lowest", _("lowest straight")), ("second", _("second-highest straight"))],
        default=_D.a2345,
        help_text=_("Where A-2-3-4-5 ranks among straights (RULES.md §3.1)."),
    )
    row_water = models.PositiveIntegerField(
        _("row water (比牌水数)"),
        default=_D.row_water,
        help_text=_(
            "Water the winner of each row wins from the loser, before any row bonus "
            "(RULES.md §7.1); 1 to 100. A double gun doubles it with the bonuses."
        ),
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
    reconnect_grace_seconds = models.PositiveIntegerField(
        _("reconnect grace (s)"),
        default=_D.reconnect_grace_seconds,
        help_text=_(
            "Once every connected player has submitted, a disconnected player's hand waits this "
            "long after the disconnect (0 to 60, never past the arrange deadline) before it is "
            "played for them (RULES.md §9)."
        ),
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
    preset = models.CharField(
        _("preset"),
        max_length=16,
        blank=True,
        editable=False,
        choices=[(p.id, f"{p.zh} {p.en}") for p in PRESETS.values()],
        help_text=_(
            "The preset of RULES.md §12.6 these rules play, their pace and base score aside "
            "(the lobby's badge); empty for other rules. Kept up to date on every save."
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
            ),
            models.CheckConstraint(
                condition=~models.Q(is_draft=True, is_default=True),
                name="draft_is_never_default",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        if self.is_draft and self.is_default:
            raise ValidationError(
                {"is_default": _("A draft cannot be the default: publish it first.")}
            )

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

    def preset_refresh(self) -> str:
        """Set and save :attr:`preset` from the stored rules (special hands included), after
        any change to them; returns it."""
        rows = list(SpecialHandSetting.objects.filter(configuration=self))  # as saved now
        try:
            preset = preset_of(RuleConfig.from_dict(self.engine_dict(rows))) or ""
        except ConfigError:
            preset = ""
        if preset != self.preset:
            self.preset = preset
            type(self).objects.filter(pk=self.pk).update(preset=preset)
        return preset

    @staticmethod
    def engine_values(config: RuleConfig) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The field values of a configuration equal to ``config`` (its preset included), and
        those of its special-hand rows (``special``, ``enabled``, ``water``, ``order``)."""
        data = config.to_dict()
        values = {name: data[name] for name in PLAIN_FIELDS}
        values.update({f: data["row_bonus"][key] for f, key in ROW_BONUS_FIELDS.items()})
        values["preset"] = preset_of(config) or ""
        rows = [
            {
                "special": sid,
                "enabled": data["specials"][sid]["enabled"],
                "water": data["specials"][sid]["water"],
                "order": position,
            }
            for position, sid in enumerate(data["special_order"], start=1)
        ]
        return values, rows

    @classmethod
    def from_engine(cls, config: RuleConfig, **fields: Any) -> RuleConfiguration:
        """A saved configuration (with its special-hand rows) equal to ``config``."""
        values, rows = cls.engine_values(config)
        obj = cls.objects.create(**{**values, **fields})
        SpecialHandSetting.objects.bulk_create(
            SpecialHandSetting(configuration=obj, **row) for row in rows
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
