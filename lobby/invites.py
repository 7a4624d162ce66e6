"""Invite links: the share link of a private room (a series' room too) or a duplicate match,
which seats whoever opens it, in one tap, without the room's code.

A link is ``/lobby/invite/<token>/`` with the token ``<kind><id>.<mac>``: ``r`` and a room's id
or ``m`` and a match's id (neither is secret: ids are in the lobby's list), then 43 characters,
the HMAC-SHA256 (under SECRET_KEY, base64url) of the target and its `Invite` row's random salt
(``secrets.token_urlsafe(32)``). The link is checked by recomputing the mac and comparing in
constant time; an unknown target, a mistyped or a revoked token all answer the same
`InviteNotFound`. Only the salt is stored, so the owner's page can show the link again while a
copy of the database alone opens no seat. The first link is made as the target opens
(`lobby.services.invite_issue`); the owner revokes a link by making a new one
(`invite_regenerate`); a link expires with its target (a closed room, a match no longer played:
`InviteExpired`).

The room's own checks do the rest: `invite_accept` seats through `lobby.services.room_join`
(frozen transfers, seated elsewhere, full, entry minimum), so a link is a code typed for the
player, never a way around the lobby's rules.
"""

from __future__ import annotations

import base64
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Count
from django.urls import reverse
from django.utils.crypto import salted_hmac

from accounts.models import User
from games.models import DuplicateMatch, MatchStatus
from lobby.errors import InviteExpired, InviteNotFound, NotInviteOwner, RoomFull
from lobby.models import Invite, Room, RoomStatus, Seat
from lobby.services import INVITE_SALT_BYTES, invite_issue, room_join

__all__ = ["invite_issue"]  # a target's first link is made by its opening service

ROOM = "r"
MATCH = "m"
MAC_LENGTH = 43  # the whole HMAC-SHA256, base64url without padding: 256 bits
TOKEN_MAX_LENGTH = 1 + 12 + 1 + MAC_LENGTH
_TOKEN = re.compile(rf"^([{ROOM}{MATCH}])([1-9][0-9]{{0,11}})\.([A-Za-z0-9_-]{{{MAC_LENGTH}}})$")
_HMAC_SALT = "lobby.invites"


def _mac(kind: str, target_id: int, salt: str) -> str:
    digest = salted_hmac(_HMAC_SALT, f"{kind}:{target_id}:{salt}", algorithm="sha256").digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def invite_token(invite: Invite) -> str:
    """The token of an invite's current link."""
    if invite.room_id is not None:
        kind, target_id = ROOM, invite.room_id
    else:
        assert invite.match_id is not None
        kind, target_id = MATCH, invite.match_id
    return f"{kind}{target_id}.{_mac(kind, target_id, invite.salt)}"


def invite_path(invite: Invite) -> str:
    return reverse("lobby:invite", args=[invite_token(invite)])


@dataclass(frozen=True)
class InviteTarget:
    """What a link opens: a room (private, a series' too) or a duplicate match."""

    invite: Invite
    room: Room | None
    match: DuplicateMatch | None

    @property
    def open(self) -> bool:
        if self.room is not None:
            return self.room.status == RoomStatus.OPEN
        assert self.match is not None
        return self.match.status == MatchStatus.PLAYING

    def room_ids(self) -> list[int]:
        """The rooms the link seats at: the room, or the match's tables in their order."""
        if self.room is not None:
            return [self.room.pk]
        rooms = Room.objects.filter(match=self.match).order_by("match_table")
        return list(rooms.values_list("pk", flat=True))


def invite_target(token: object) -> InviteTarget:
    """The target of a link's token, whether open or not; `InviteNotFound` for anything else
    (not a token, an unknown target, a wrong or revoked mac), the same answer every time."""
    found = _TOKEN.fullmatch(token) if isinstance(token, str) else None
    if found is None:
        raise InviteNotFound()
    kind, target_id, mac = found.group(1), int(found.group(2)), found.group(3)
    lookup = {"room_id": target_id} if kind == ROOM else {"match_id": target_id}
    invite = Invite.objects.filter(**lookup).select_related("room", "match").first()
    # Compared even when there is no such invite (against a salt nobody has), so the time
    # taken does not tell a known target from an unknown one.
    salt = invite.salt if invite is not None else "-" * 43
    if not hmac.compare_digest(mac.encode(), _mac(kind, target_id, salt).encode()):
        raise InviteNotFound()
    if invite is None:
        raise InviteNotFound()
    return InviteTarget(invite=invite, room=invite.room, match=invite.match)


@transaction.atomic
def invite_regenerate(
    *, user: User, room_id: int | None = None, match_id: int | None = None
) -> Invite:
    """Make a new link for a private room or a match (the first one for a target opened
    without one); the earlier link stops working at once. Only the current owner may
    (`not_invite_owner`), and only while the room is open or the match played (`invite_expired`);
    a public room has no link (`room_not_found`)."""
    assert (room_id is None) != (match_id is None)
    target: dict[str, Any]
    if room_id is not None:
        room = Room.objects.select_for_update().filter(pk=room_id, is_private=True).first()
        if room is None:
            raise InviteNotFound()
        owner_id, still_open, target = room.owner_id, room.status == RoomStatus.OPEN, {"room": room}
    else:
        match = DuplicateMatch.objects.select_for_update().filter(pk=match_id).first()
        if match is None:
            raise InviteNotFound()
        owner_id, still_open = match.owner_id, match.status == MatchStatus.PLAYING
        target = {"match": match}
    if owner_id != user.pk:
        raise NotInviteOwner()
    if not still_open:
        raise InviteExpired()
    invite, _created = Invite.objects.update_or_create(
        **target, defaults={"salt": secrets.token_urlsafe(INVITE_SALT_BYTES)}
    )
    return invite


@transaction.atomic
def invite_accept(*, user: User, token: str) -> Seat:
    """Seat the player through a link: at the room, or at the first table of the match with a
    free seat. A player seated there already keeps that seat (opening the link twice is one
    seating). Refused as `invite_not_found` (a bad or revoked token), `invite_expired` (the
    target is closed), and as `room_join` refuses (`transfers_frozen`, `already_seated`
    elsewhere, `room_full`, `insufficient_coins`); nothing is written then. A guest may take
    the seat: the link is the owner's invitation (docs/security.md, "Guests")."""
    target = invite_target(token)
    if not target.open:
        raise InviteExpired()
    room_ids = target.room_ids()
    seat = Seat.objects.filter(user=user, room_id__in=room_ids).select_related("room").first()
    if seat is not None:
        return seat
    free = _first_with_free_seat(room_ids)
    if free is None:
        raise RoomFull()
    room = Room.objects.get(pk=free)
    # room_join locks the room and checks everything again under the lock.
    return room_join(user=user, room_id=room.pk, code=room.code or "", invited=True)


def _first_with_free_seat(room_ids: list[int]) -> int | None:
    """The first open room of these, in their order, with a free seat (read without locks:
    the join checks again under the room's lock)."""
    rooms = Room.objects.filter(pk__in=room_ids, status=RoomStatus.OPEN).annotate(
        taken=Count("taken_seats")
    )
    free = {room.pk for room in rooms if room.taken < room.seats}
    return next((room_id for room_id in room_ids if room_id in free), None)


def invite_share(
    *, user: Any, room_id: int | None = None, match_id: int | None = None
) -> dict[str, Any] | None:
    """What the owner's page shows of a target's link: {"path", "kind", "target_id",
    "made"}; "path" is "" when the target has no link yet (the page offers to make one).
    None for anyone but the owner, for a public room, and once the target is closed."""
    if not getattr(user, "is_authenticated", False):
        return None
    if room_id is not None:
        room = Room.objects.filter(pk=room_id, is_private=True).first()
        if room is None or room.owner_id != user.pk or room.status != RoomStatus.OPEN:
            return None
        invite = Invite.objects.filter(room=room).first()
        kind, target_id = ROOM, room.pk
    else:
        match = DuplicateMatch.objects.filter(pk=match_id).first()
        if match is None or match.owner_id != user.pk or match.status != MatchStatus.PLAYING:
            return None
        invite = Invite.objects.filter(match=match).first()
        kind, target_id = MATCH, match.pk
    return {
        "path": invite_path(invite) if invite is not None else "",
        "kind": kind,
        "target_id": target_id,
    }
