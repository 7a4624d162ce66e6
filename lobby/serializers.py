"""What the lobby accepts, shared by the HTTP API and the WebSocket.

These check types and shapes only; the services check the values (seat counts, base score
range, names), so that each bad value gets its own error whichever way it arrives.
"""

from rest_framework import serializers

from games.models import RuleConfiguration
from games.variants import VARIANTS
from lobby.models import CODE_LENGTH, MAX_BASE_SCORE, SEAT_COUNTS, BotLevel

SEATS_HELP = (
    "2 to 6, at most what the rules' deck seats (4 classic, 5 with an extra suit, 6 with two)."
)
VARIANT_HELP = f"A variant slug ({', '.join(VARIANTS)}); unknown: unknown_variant."


def variant_field(help_text: str) -> serializers.CharField:
    """An optional variant slug; its value is checked by the lobby (`unknown_variant`)."""
    return serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        default=None,
        max_length=32,
        trim_whitespace=False,
        help_text=f"{help_text} {VARIANT_HELP}",
    )


class RoomCreateInput(serializers.Serializer):
    name = serializers.CharField(
        max_length=200,
        trim_whitespace=False,
        required=False,
        help_text="Optional: without it, the room is named after its owner.",
    )
    base_score = serializers.IntegerField()
    seats = serializers.IntegerField(help_text=SEATS_HELP)
    private = serializers.BooleanField(default=False)
    rules = serializers.PrimaryKeyRelatedField(
        queryset=RuleConfiguration.objects.all(),
        required=False,
        allow_null=True,
        help_text="A rule configuration's id; the default rules when omitted.",
    )
    bots = serializers.IntegerField(
        default=0,
        help_text="Bot players seated beside you: 0 to seats - 1 (they play through the same "
        "services, with human-like delays, and leave when the last person leaves).",
    )
    spectators = serializers.BooleanField(
        default=True, help_text="Anyone may watch the table (a public room only)."
    )
    series_rounds = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="A series (房卡): a private room of 2 to 32 rounds, then a final scoreboard.",
    )
    chat_text = serializers.BooleanField(
        default=True,
        help_text="Free-text chat at the table (quick phrases and reactions are always on).",
    )
    bot_level = serializers.ChoiceField(
        choices=BotLevel.choices,
        default=BotLevel.STRONG,
        help_text="How the room's bots play (games.rules.levels): easy and normal are simple "
        "heuristics, strong the engine's best arrangement, expert a rollout over the best ones.",
    )


class RoomJoinInput(serializers.Serializer):
    code = serializers.CharField(
        required=False, allow_blank=True, max_length=32, help_text="A private room's code."
    )


class JoinByCodeInput(serializers.Serializer):
    code = serializers.CharField(max_length=32, help_text=f"{CODE_LENGTH} characters.")


class QuickJoinInput(serializers.Serializer):
    base_score = serializers.IntegerField(help_text=f"1 to {MAX_BASE_SCORE:,}.")
    seats = serializers.IntegerField(help_text=SEATS_HELP)
    with_bots = serializers.BooleanField(
        default=False,
        help_text="Open a new quick room and fill its other seats with bots, to play now.",
    )
    bot_level = serializers.ChoiceField(
        choices=BotLevel.choices,
        default=BotLevel.STRONG,
        help_text="With `with_bots`: how the bots play (easy, normal, strong, expert).",
    )
    variant = variant_field(
        "Only rooms of this variant (any rules); a room opened has the default rules if they "
        "are of it, else the first configuration by name that is. Omitted: the default rules."
    )


class RoomFilterInput(serializers.Serializer):
    base_score = serializers.IntegerField(required=False, min_value=1)
    seats = serializers.IntegerField(required=False)
    free = serializers.BooleanField(required=False, allow_null=True, default=None)
    variant = variant_field("Only rooms whose rules' deck is of this variant.")


class RoomRefInput(RoomJoinInput):
    """A room named by its id (WebSocket messages; the API has the id in its path)."""

    room = serializers.IntegerField()


class RoomPageInput(serializers.Serializer):
    """Which page of the lobby's room list, with which filters (the lobby socket's `snapshot`
    and its URL's query string, like the page's: ?page=2&base_score=100&seats=4&free=on
    &variant=duoyise)."""

    page = serializers.IntegerField(min_value=1, max_value=1_000_000, default=1)
    base_score = serializers.IntegerField(
        min_value=1, max_value=MAX_BASE_SCORE, required=False, allow_null=True, default=None
    )
    seats = serializers.ChoiceField(
        choices=SEAT_COUNTS, required=False, allow_null=True, default=None
    )
    free = serializers.BooleanField(default=False, help_text="Only rooms with a free seat.")
    variant = variant_field("Only rooms whose rules' deck is of this variant.")
