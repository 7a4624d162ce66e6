"""Rooms and the seats in them (RULES.md §10).

Rows are written only by the lobby's services (`lobby.services`, `lobby.matchmaking`, through
`lobby.store`) and `games.live.matches`, which opens a duplicate match's rooms. The database
holds the invariants that matter under concurrency: a seat position is taken once per room, a
player sits at one table at a time, a private room's code is unique among open rooms, and the
room's numbers stay in range.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.utils.translation import gettext_lazy as _

from games.models import RuleConfiguration

# Seats a room may have; a room's rule configuration may allow fewer (its deck's `max_seats`,
# RULES.md §12.5: 4 with the classic deck, 5 with one extra suit, 6 with two), which the
# services check when the room is opened.
SEAT_COUNTS = (2, 3, 4, 5, 6)
# A base score above this would make the entry minimum (§7.4) absurd: at the default rules,
# 1,000,000 already needs 324,000,000 coins to sit down.
MAX_BASE_SCORE = 1_000_000
NAME_MAX_LENGTH = 40
CODE_LENGTH = 6
# Upper-case letters and digits without the ambiguous ones (0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


class BotLevel(models.TextChoices):
    """How the room's bots play (games.rules.levels)."""

    EASY = "easy", _("Easy (新手)")
    NORMAL = "normal", _("Normal (普通)")
    STRONG = "strong", _("Strong (高手)")
    EXPERT = "expert", _("Expert (大师)")


class RoomStatus(models.TextChoices):
    OPEN = "open", _("open")
    CLOSED = "closed", _("closed")


class Room(models.Model):
    """A table players sit at: its rules, base score and number of seats (at most what the
    rules' deck seats, checked by the services: the database only knows SEAT_COUNTS).

    `entry_minimum` is computed from the rule configuration at the room's own base score when
    the room is created (RULES.md §7.4) and does not change afterwards. `version` grows by one
    with every change a lobby client can see, so clients can ignore stale events.
    """

    name = models.CharField(_("name"), max_length=NAME_MAX_LENGTH)
    rules = models.ForeignKey(
        RuleConfiguration,
        verbose_name=_("rule configuration"),
        on_delete=models.PROTECT,
        related_name="rooms",
    )
    base_score = models.PositiveIntegerField(_("base score (底分)"))
    seats = models.PositiveSmallIntegerField(_("seats"))
    is_private = models.BooleanField(_("private"), default=False)
    code = models.CharField(
        _("code"),
        max_length=CODE_LENGTH,
        null=True,
        blank=True,
        help_text=_("Private rooms only: players join with this code."),
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("owner"),
        on_delete=models.PROTECT,
        related_name="owned_rooms",
    )
    status = models.CharField(
        _("status"), max_length=8, choices=RoomStatus.choices, default=RoomStatus.OPEN
    )
    entry_minimum = models.BigIntegerField(_("entry minimum"))
    version = models.PositiveIntegerField(_("version"), default=1)
    created_at = models.DateTimeField(_("created at"), db_default=Now(), editable=False)
    closed_at = models.DateTimeField(_("closed at"), null=True, blank=True)
    # When the last seat was freed (null while someone sits, and for a room nobody has left
    # yet): an open room empty for LOBBY_IDLE_ROOM_SECONDS is closed (lobby.tasks).
    empty_since = models.DateTimeField(_("empty since"), null=True, blank=True)
    # How the bots it seats play (chosen when the room is opened).
    bot_level = models.CharField(
        _("bot level"), max_length=8, choices=BotLevel.choices, default=BotLevel.STRONG
    )
    # A table of a duplicate match: which match, and its number there (1, 2, …).
    match = models.ForeignKey(
        "games.DuplicateMatch",
        verbose_name=_("duplicate match"),
        on_delete=models.PROTECT,
        related_name="rooms",
        null=True,
        blank=True,
    )
    match_table = models.PositiveSmallIntegerField(_("match table"), null=True, blank=True)
    # A series (房卡): a private room opened for this many rounds, with a final
    # scoreboard anyone with its link (the token) may read.
    series_rounds = models.PositiveSmallIntegerField(_("series rounds"), null=True, blank=True)
    series_token = models.CharField(
        _("series link token"), max_length=24, null=True, blank=True, unique=True, editable=False
    )
    # Anyone may watch the table (a public room only): spectators see what is public.
    allow_spectators = models.BooleanField(
        _("spectators allowed"),
        default=True,
        help_text=_("Anyone may watch a public room's table; hands are shown once revealed."),
    )
    # Free-text table chat; quick phrases and reactions are always allowed.
    chat_text = models.BooleanField(
        _("free-text chat"),
        default=True,
        help_text=_("Players may type short messages at the table (phrases are always on)."),
    )

    class Meta:
        verbose_name = _("room")
        verbose_name_plural = _("rooms")
        ordering = ["id"]
        indexes = [models.Index(fields=["status", "base_score", "seats"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(seats__in=SEAT_COUNTS), name="lobby_room_seats_2_to_6"
            ),
            models.CheckConstraint(
                condition=Q(base_score__gte=1, base_score__lte=MAX_BASE_SCORE),
                name="lobby_room_base_score_in_range",
            ),
            models.CheckConstraint(
                condition=Q(entry_minimum__gte=0), name="lobby_room_entry_minimum_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(is_private=True, code__isnull=False)
                | Q(is_private=False, code__isnull=True),
                name="lobby_room_code_iff_private",
            ),
            models.CheckConstraint(
                condition=Q(status=RoomStatus.OPEN, closed_at__isnull=True)
                | Q(status=RoomStatus.CLOSED, closed_at__isnull=False),
                name="lobby_room_closed_at_iff_closed",
            ),
            models.CheckConstraint(
                condition=Q(bot_level__in=BotLevel.values), name="lobby_room_bot_level_known"
            ),
            models.CheckConstraint(
                condition=Q(match__isnull=True, match_table__isnull=True)
                | Q(match__isnull=False, match_table__gte=1),
                name="lobby_room_match_table_iff_match",
            ),
            models.UniqueConstraint(
                fields=["match", "match_table"], name="lobby_room_match_table_once"
            ),
            models.CheckConstraint(
                condition=Q(series_rounds__isnull=True, series_token__isnull=True)
                | Q(series_rounds__gte=2, series_rounds__lte=32, series_token__isnull=False),
                name="lobby_room_series_rounds_in_range",
            ),
            models.UniqueConstraint(
                fields=["code"],
                condition=Q(status=RoomStatus.OPEN),
                name="lobby_room_code_unique_among_open",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        if self.rules_id is not None and self.rules.is_draft:
            raise ValidationError(
                {"rules": _("A draft rule configuration cannot be played: publish it first.")}
            )


class Seat(models.Model):
    """A player sitting in a room, at a position from 0 to seats - 1."""

    room = models.ForeignKey(
        Room, verbose_name=_("room"), on_delete=models.PROTECT, related_name="taken_seats"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("player"),
        on_delete=models.PROTECT,
        related_name="+",
    )
    position = models.PositiveSmallIntegerField(_("position"))
    joined_at = models.DateTimeField(_("joined at"), db_default=Now(), editable=False)

    class Meta:
        verbose_name = _("seat")
        verbose_name_plural = _("seats")
        ordering = ["room", "position"]
        constraints = [
            models.UniqueConstraint(fields=["user"], name="lobby_seat_one_table_per_player"),
            models.UniqueConstraint(
                fields=["room", "position"], name="lobby_seat_position_taken_once"
            ),
            models.CheckConstraint(
                condition=Q(position__lt=max(SEAT_COUNTS)), name="lobby_seat_position_in_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.room} #{self.position}"


class Invite(models.Model):
    """The share link of a private room (a series' room too) or of a duplicate match: one per
    target, written by `lobby.invites`.

    The link's token is not stored: it is an HMAC (under SECRET_KEY) of the target and this
    row's random `salt`, so the owner's page can show it again while a copy of the database
    alone opens no seat. Regenerating replaces the salt, and every earlier link stops working.
    """

    room = models.OneToOneField(
        Room,
        verbose_name=_("room"),
        on_delete=models.CASCADE,
        related_name="invite",
        null=True,
        blank=True,
    )
    match = models.OneToOneField(
        "games.DuplicateMatch",
        verbose_name=_("duplicate match"),
        on_delete=models.CASCADE,
        related_name="invite",
        null=True,
        blank=True,
    )
    salt = models.CharField(_("salt"), max_length=64, editable=False)
    created_at = models.DateTimeField(_("made at"), db_default=Now(), editable=False)

    class Meta:
        verbose_name = _("invite link")
        verbose_name_plural = _("invite links")
        constraints = [
            models.CheckConstraint(
                condition=Q(room__isnull=False, match__isnull=True)
                | Q(room__isnull=True, match__isnull=False),
                name="lobby_invite_one_target",
            ),
            models.CheckConstraint(
                condition=Q(salt__regex=r"^[A-Za-z0-9_-]{22,64}$"),
                name="lobby_invite_salt_random",
            ),
        ]

    def __str__(self) -> str:
        if self.room_id is not None:
            return f"invite to room {self.room_id}"
        return f"invite to match {self.match_id}"


class PlayWait(models.Model):
    """A player who pressed Play now and waits a few seconds (PLAY_NOW_WAIT_SECONDS) for
    people of a similar rating to sit down with (`lobby.waiting`). One row per player at most;
    gone once the player is seated, cancels or is refused at the deadline.

    `base_score` is the highest Play now base score the player could afford on pressing; the
    rating is the player's (and its deviation) in `family` at that moment."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        verbose_name=_("player"),
        on_delete=models.CASCADE,
        related_name="+",
    )
    rules = models.ForeignKey(
        RuleConfiguration,
        verbose_name=_("rule configuration"),
        on_delete=models.CASCADE,
        related_name="+",
    )
    base_score = models.PositiveIntegerField(_("base score (底分)"))
    family = models.CharField(_("rating family"), max_length=40)
    rating = models.FloatField(_("rating"))
    deviation = models.FloatField(_("rating deviation"))
    created_at = models.DateTimeField(_("created at"))
    deadline = models.DateTimeField(_("deadline"))

    class Meta:
        verbose_name = _("Play now wait")
        verbose_name_plural = _("Play now waits")
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["rules", "created_at"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(base_score__gte=1, base_score__lte=MAX_BASE_SCORE),
                name="lobby_playwait_base_score_in_range",
            ),
            models.CheckConstraint(
                condition=Q(deadline__gte=models.F("created_at")),
                name="lobby_playwait_deadline_after_start",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} waiting since {self.created_at:%H:%M:%S}"
