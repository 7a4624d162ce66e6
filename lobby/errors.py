"""Why the lobby refused a request.

Every refusal is a `LobbyError` subclass, a `shisanshui.errors.ClientError`: a stable `code`
(for programs), an HTTP `status` (for the API) and a `message` for people in the language
active when it is read. When one is raised, nothing has been written. A rate limit's refusal
and an unusable socket frame are `shisanshui.errors`' own.
"""

from typing import ClassVar

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from games.variants import VARIANTS
from shisanshui.errors import ClientError


class LobbyError(ClientError):
    """The lobby refused a request."""

    code: ClassVar[str] = "lobby_error"
    template: ClassVar[Promise | str] = _("The lobby refused the request.")


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


class DraftRules(LobbyError):
    code = "draft_rules"
    status = 409
    template = _(
        "The rule configuration %(rules)s is a draft: it cannot be played until it is published."
    )


class NoDefaultRules(LobbyError):
    code = "no_default_rules"
    status = 409
    template = _("No default rule configuration is set; ask an administrator.")


class NoVariantRules(LobbyError):
    code = "no_variant_rules"
    status = 409
    template = _("No rule configuration offers the variant %(variant)s; ask an administrator.")


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


class TransfersFrozen(LobbyError):
    """Support froze the player's transfers pending a collusion review (accounts.collusion)."""

    code = "transfers_frozen"
    status = 403
    template = _(
        "Your account's transfers are frozen pending a review by support: you cannot take a "
        "seat until the review is over. Contact support if you think this is a mistake."
    )


class GuestNotAllowed(LobbyError):
    """A guest plays only Play now tables full of bots (docs/security.md, "Guests")."""

    code = "guest_not_allowed"
    status = 403
    template = _(
        "Guests play Play now tables with bots only. Sign up to keep your coins and to open, "
        "join or share rooms with other players."
    )


class GuestTable(LobbyError):
    """A person may not sit at a table a guest plays at (their coins would meet)."""

    code = "guest_table"
    status = 403
    template = _("A guest plays at this table with bots only; choose another room.")


class InsufficientCoins(LobbyError):
    code = "insufficient_coins"
    status = 403
    template = _("This room needs at least %(needed)s coins to sit down; you have %(balance)s.")


# The state of the room or the player (409).


class RoomClosed(LobbyError):
    code = "room_closed"
    status = 409
    template = _("This room is closed.")


class RoundInPlay(LobbyError):
    code = "round_in_play"
    status = 409
    template = _("A round is in play in room “%(room)s”: its rules can change only between rounds.")


class RoomFull(LobbyError):
    code = "room_full"
    status = 409
    template = _("Every seat in this room is taken.")


class GuestCannotCover(LobbyError):
    code = "guest_cannot_cover"
    status = 409
    template = _(
        "A guest's coins do not reach this table's entry minimum: sign up to take the seat."
    )


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


class BotsUnavailable(LobbyError):
    """The house's bankroll for bots is used up for today (accounts.mint, bot funding)."""

    code = "bots_unavailable"
    status = 409
    template = _(
        "Today's bankroll for bots is used up, so no bot can be seated now (from 00:00 UTC "
        "again). Open or join a room to play with people."
    )


class TooManyRooms(LobbyError):
    code = "too_many_rooms"
    status = 409
    template = _(
        "You already have %(max)s open rooms, the most one player may have. Close one of your "
        "empty rooms first; an empty room also closes by itself after %(minutes)s minutes."
    )


# Invite links (lobby.invites).


class InviteNotFound(LobbyError):
    """An unknown, mistyped or revoked link: all look alike, so a guess learns nothing."""

    code = "invite_not_found"
    status = 404
    template = _(
        "This invite link does not work: it may be mistyped, or its owner made a new one. "
        "Ask for the link again."
    )


class InviteExpired(LobbyError):
    code = "invite_expired"
    status = 409
    template = _("This invite link has expired: the room or match it was for is closed.")


class NotInviteOwner(LobbyError):
    code = "not_invite_owner"
    status = 403
    template = _("Only the owner of the room or match can make its invite link.")
