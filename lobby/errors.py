"""Why the lobby refused a request.

Every refusal is a `LobbyError` subclass with a stable `code` (for programs), an HTTP `status`
(for the API) and a `message` for people, rendered in the language active when it is read, so
the same error reads in English or Chinese wherever it is shown. When one is raised, nothing
has been written.
"""

from typing import Any, ClassVar

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from games.variants import VARIANTS
from shisanshui.api import retry_message


class LobbyError(Exception):
    """The lobby refused a request. `params` fill the message's %(name)s placeholders."""

    code: ClassVar[str] = "lobby_error"
    status: ClassVar[int] = 400
    template: ClassVar[Promise | str] = _("The lobby refused the request.")

    def __init__(self, **params: Any) -> None:
        self.params = params
        super().__init__(self.code, params)

    @property
    def message(self) -> str:
        """The message in the active language."""
        return str(self.template) % self.params if self.params else str(self.template)

    def details(self) -> dict[str, Any]:
        """Fields a program needs beside code and message (e.g. `retry_after`); none here."""
        return {}

    def __str__(self) -> str:
        return self.message


def coins(amount: int) -> str:
    """Coins as shown in messages: 32,400."""
    return f"{amount:,}"


# Bad input (400).


class InvalidRoomName(LobbyError):
    code = "invalid_room_name"
    template = _("A room name must be 1 to %(max)s characters, without control characters.")


class InvalidSeatCount(LobbyError):
    code = "invalid_seat_count"
    template = _("A room has 2 to 6 seats, not %(seats)s.")


class InvalidChatSetting(LobbyError):
    code = "invalid_chat_setting"
    template = _("Free-text chat and spectators are on (true) or off (false).")


class InvalidSeries(LobbyError):
    code = "invalid_series"
    template = _("A series is a private room of 2 to %(max)s rounds, not %(rounds)s.")


class InvalidMatchTables(LobbyError):
    code = "invalid_match_tables"
    template = _("A duplicate match has 2 to 4 tables, not %(tables)s.")


class InvalidMatchDeals(LobbyError):
    code = "invalid_match_deals"
    template = _("A duplicate match has 1 to %(max)s deals, not %(deals)s.")


class TooManySeats(LobbyError):
    """More seats than the room's rules deal hands for (their deck's `max_seats`, RULES.md
    §12.5: 4 with the classic deck, 5 with one extra suit, 6 with two, 4 with spare cards)."""

    code = "too_many_seats"
    template = _("The rules “%(rules)s” seat at most %(max)s players, not %(seats)s.")


class UnknownVariant(LobbyError):
    code = "unknown_variant"
    template = _("There is no such variant; choose one of %(choices)s.")

    def __init__(self) -> None:
        super().__init__(choices=", ".join(VARIANTS))


class InvalidBaseScore(LobbyError):
    code = "invalid_base_score"
    template = _("The base score must be a whole number from 1 to %(max)s, not %(base_score)s.")


class InvalidBotCount(LobbyError):
    code = "invalid_bot_count"
    template = _("A room of %(seats)s seats takes 0 to %(max)s bots, not %(bots)s.")


class InvalidBotLevel(LobbyError):
    code = "invalid_bot_level"
    template = _("Unknown bot level %(level)s: one of %(levels)s.")


class InvalidRules(LobbyError):
    code = "invalid_rules"
    template = _("That rule configuration cannot be used for a room.")


class NoDefaultRules(LobbyError):
    code = "no_default_rules"
    status = 409
    template = _("No default rule configuration is set; ask an administrator.")


class NoVariantRules(LobbyError):
    code = "no_variant_rules"
    status = 409
    template = _("No rule configuration offers the variant %(variant)s; ask an administrator.")


# The WebSocket's own bad input (400).


class MalformedMessage(LobbyError):
    code = "malformed_message"
    template = _("The message cannot be used: %(detail)s")


class UnknownMessageType(LobbyError):
    code = "unknown_message_type"
    template = _("Unknown message type %(type)s.")


class MessageTooLarge(LobbyError):
    code = "message_too_large"
    template = _("The message is longer than %(max)s bytes.")


# Who and where (403, 404).


class RoomNotFound(LobbyError):
    code = "room_not_found"
    status = 404
    template = _("There is no such room.")


class WrongRoomCode(LobbyError):
    code = "wrong_room_code"
    status = 403
    template = _("This room is private and that is not its code.")


class NotRoomOwner(LobbyError):
    code = "not_room_owner"
    status = 403
    template = _("Only the room's owner can close it.")


class InsufficientCoins(LobbyError):
    code = "insufficient_coins"
    status = 403
    template = _("This room needs at least %(needed)s coins to sit down; you have %(balance)s.")


# The state of the room or the player (409).


class RoomClosed(LobbyError):
    code = "room_closed"
    status = 409
    template = _("This room is closed.")


class RoomFull(LobbyError):
    code = "room_full"
    status = 409
    template = _("Every seat in this room is taken.")


class AlreadySeated(LobbyError):
    code = "already_seated"
    status = 409
    template = _("You are already seated in room “%(room)s”; leave it first.")


class NotSeated(LobbyError):
    code = "not_seated"
    status = 409
    template = _("You are not seated in any room.")


class RoomNotEmpty(LobbyError):
    code = "room_not_empty"
    status = 409
    template = _("A room can be closed only when nobody is seated in it.")


class TooManyRooms(LobbyError):
    code = "too_many_rooms"
    status = 409
    template = _(
        "You already have %(max)s open rooms, the most one player may have. Close one of your "
        "empty rooms first; an empty room also closes by itself after %(minutes)s minutes."
    )


class TooManyMatches(LobbyError):
    code = "too_many_matches"
    status = 409
    template = _(
        "You already have a duplicate match being played: one at a time. It ends after its "
        "last deal, or when nobody plays at its tables any more."
    )


# Too many requests (429).


class RateLimitedError(LobbyError):
    """A rate limit (shisanshui.ratelimit) refused the request; `retry_after` is in seconds."""

    code = "rate_limited"
    status = 429

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after=retry_after)
        self.retry_after = retry_after

    @property
    def message(self) -> str:
        return retry_message(self.retry_after)  # the words of the API's own 429s

    def details(self) -> dict[str, Any]:
        return {"retry_after": self.retry_after}
