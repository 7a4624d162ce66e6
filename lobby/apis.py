"""The HTTP API of the lobby, under /api/lobby/: list rooms, create, join, quick-join, leave, close.

Browsers authenticate with their session (and its CSRF token), scripts with
"Authorization: Token <key>". Every refusal answers the API's error body (shisanshui.api),
{"error": {"code": ..., "message": ...}}, with 400 (bad input), 403 (not allowed), 404 (no
such room) or 409 (the room's or the player's state forbids it); the message is in the
request's language.
"""

from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from games.variants import VARIANTS
from lobby.matchmaking import room_quick_join
from lobby.models import MAX_BASE_SCORE, NAME_MAX_LENGTH, Seat
from lobby.selectors import room_list, room_view, room_view_of, seat_view
from lobby.serializers import (
    JoinByCodeInput,
    QuickJoinInput,
    RoomCreateInput,
    RoomFilterInput,
    RoomJoinInput,
)
from lobby.services import room_close, room_create, room_join, room_join_by_code, room_leave
from shisanshui.api import ErrorBodyApi, error_responses

# Output.


class RoomVariantLabelsSerializer(serializers.Serializer):
    zh = serializers.CharField()
    en = serializers.CharField()


NAME_HELP = (
    "In the request's language: a name the platform gave (快速 Quick, Standard 标准) in that "
    "language's half only; a name someone typed as entered."
)


class RoomRulesSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(help_text=NAME_HELP)
    names = RoomVariantLabelsSerializer(
        allow_null=True,
        help_text="A name the platform gave in Chinese and English; null for a typed name.",
    )


class RoomVariantSerializer(serializers.Serializer):
    tags = serializers.ListField(
        child=serializers.ChoiceField(choices=list(VARIANTS)),
        help_text="The variant tags of the room's rules (games.variants): classic, fuzhou, "
        'regional, duoyise, duoerse, laizi, duosanzhang; e.g. ["duoyise", "laizi"].',
    )
    label = serializers.CharField(
        help_text="The badge in the request's language: 多一色·癞子, Extra suit · Jokers, 经典."
    )
    labels = RoomVariantLabelsSerializer(help_text="The badge in Chinese and English.")


class RoomNicknameSerializer(serializers.Serializer):
    zh = serializers.CharField()
    en = serializers.CharField()


class RoomPlayerSerializer(serializers.Serializer):
    position = serializers.IntegerField(help_text="Seat position, from 0.")
    username = serializers.CharField()
    name = serializers.CharField(
        help_text="The name players see: the username, or a bot's nickname in the request's "
        "language."
    )
    nickname = RoomNicknameSerializer(
        allow_null=True, help_text="A bot's nickname in Chinese and English; null for a person."
    )


class RoomMatchSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The duplicate match's id (/api/games/matches/<id>/).")
    table = serializers.IntegerField(help_text="This room's table number in the match, from 1.")
    tables = serializers.IntegerField()
    deals = serializers.IntegerField()
    status = serializers.CharField(help_text="playing, finished or abandoned.")


class RoomSerializer(serializers.Serializer):
    """A room's public row (the same as the live lobby events), plus its code for its owner
    and the players seated in it."""

    id = serializers.IntegerField()
    name = serializers.CharField(help_text=NAME_HELP)
    names = RoomVariantLabelsSerializer(
        allow_null=True,
        help_text="A name the platform gave in Chinese and English; null for a typed name.",
    )
    rules = RoomRulesSerializer()
    variant = RoomVariantSerializer(help_text="The variant deck its rules play (RULES.md §12).")
    base_score = serializers.IntegerField()
    seats = serializers.IntegerField(help_text="2 to 6 (at most what the rules' deck seats).")
    seats_taken = serializers.IntegerField()
    entry_minimum = serializers.IntegerField(help_text="Coins needed to sit down (RULES.md §7.4).")
    private = serializers.BooleanField()
    status = serializers.CharField(help_text="open or closed.")
    owner = serializers.CharField(help_text="The owner's username.")
    players = RoomPlayerSerializer(many=True)
    people = serializers.IntegerField(help_text="Players seated who are not bots.")
    bot_level = serializers.CharField(
        help_text="How its bots play (games.rules.levels): easy, normal, strong or expert."
    )
    match = RoomMatchSerializer(
        allow_null=True,
        help_text="A duplicate match's table: every table of the match plays the same deals; "
        "null for an ordinary room.",
    )
    allow_spectators = serializers.BooleanField(
        help_text="Anyone may watch its table (/games/table/<id>/watch/; public rooms only)."
    )
    watchers = serializers.IntegerField(help_text="Spectators watching its table now.")
    version = serializers.IntegerField(help_text="Grows with every visible change.")
    code = serializers.CharField(
        allow_null=True,
        help_text="A private room's code, shown only to its owner and seated players.",
    )


class SeatSerializer(serializers.Serializer):
    room = RoomSerializer()
    position = serializers.IntegerField()


class MySeatSerializer(serializers.Serializer):
    seat = SeatSerializer(allow_null=True, help_text="Null when not seated.")


def room_data(room_id: int, request: Request) -> dict[str, Any]:
    """What the requesting user sees of a room (its code only if they may see it)."""
    view = room_view(room_id=room_id, user=request.user)
    if view is None:
        raise Http404
    return dict(view)


def seat_data(seat: Seat, request: Request) -> dict[str, Any]:
    return {"room": room_data(seat.room_id, request), "position": seat.position}


# Views.


@extend_schema(tags=["lobby"])
class RoomListApi(ErrorBodyApi, ListAPIView):
    """Open rooms (GET, filtered) and opening a room (POST)."""

    serializer_class = RoomSerializer

    @extend_schema(
        summary="Open rooms, oldest first",
        parameters=[
            OpenApiParameter("base_score", OpenApiTypes.INT, description="Only this base score."),
            OpenApiParameter("seats", OpenApiTypes.INT, description="Only this many seats."),
            OpenApiParameter(
                "free", OpenApiTypes.BOOL, description="true: with a free seat; false: full."
            ),
            OpenApiParameter(
                "variant",
                OpenApiTypes.STR,
                enum=list(VARIANTS),
                description="Only rooms whose rules' deck is of this variant; another value "
                "is refused (400, unknown_variant).",
            ),
        ],
        responses={200: RoomSerializer(many=True), **error_responses(400, 403)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        filters = RoomFilterInput(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return room_list(
            base_score=filters.validated_data.get("base_score"),
            seats=filters.validated_data.get("seats"),
            has_free_seat=filters.validated_data.get("free"),
            variant=filters.validated_data.get("variant") or None,  # checked: unknown_variant
        )

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        assert page is not None  # the project paginates every list
        rows = [room_view_of(room=room, user=request.user) for room in page]
        return self.get_paginated_response(RoomSerializer(rows, many=True).data)

    @extend_schema(
        summary="Create a room and sit in it",
        description=f"The name is 1 to {NAME_MAX_LENGTH} characters; base score 1 to "
        f"{MAX_BASE_SCORE:,}; 2 to 6 seats, at most what the rules' deck seats (4 with the "
        "classic deck, 5 with one extra suit, 6 with two; else 400 too_many_seats); 0 to "
        "seats - 1 bots. A private room gets a code, returned here.",
        request=RoomCreateInput,
        responses={201: RoomSerializer, **error_responses(400, 403, 409)},
    )
    def post(self, request: Request) -> Response:
        payload = RoomCreateInput(data=request.data)
        payload.is_valid(raise_exception=True)
        room = room_create(owner=request.user, **payload.validated_data)
        return Response(
            RoomSerializer(room_data(room.pk, request)).data, status=status.HTTP_201_CREATED
        )


@extend_schema(tags=["lobby"])
class RoomDetailApi(ErrorBodyApi):
    """One room, open or closed."""

    @extend_schema(summary="One room", responses={200: RoomSerializer, **error_responses(403, 404)})
    def get(self, request: Request, room_id: int) -> Response:
        return Response(RoomSerializer(room_data(room_id, request)).data)


@extend_schema(tags=["lobby"])
class RoomJoinApi(ErrorBodyApi):
    """Sit in a room from the list."""

    @extend_schema(
        summary="Sit in a room (a private one needs its code)",
        request=RoomJoinInput,
        responses={200: SeatSerializer, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request: Request, room_id: int) -> Response:
        payload = RoomJoinInput(data=request.data)
        payload.is_valid(raise_exception=True)
        seat = room_join(
            user=request.user, room_id=room_id, code=payload.validated_data.get("code", "")
        )
        return Response(SeatSerializer(seat_data(seat, request)).data)


@extend_schema(tags=["lobby"])
class RoomJoinByCodeApi(ErrorBodyApi):
    """Sit in a private room found by its code."""

    @extend_schema(
        summary="Sit in the private room that has this code",
        request=JoinByCodeInput,
        responses={200: SeatSerializer, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request: Request) -> Response:
        payload = JoinByCodeInput(data=request.data)
        payload.is_valid(raise_exception=True)
        seat = room_join_by_code(user=request.user, code=payload.validated_data["code"])
        return Response(SeatSerializer(seat_data(seat, request)).data)


@extend_schema(tags=["lobby"])
class QuickJoinApi(ErrorBodyApi):
    """Sit at a public table of a kind, opening one if none has a free seat."""

    @extend_schema(
        summary="Sit at the first public table of this kind with a free seat (or open one)",
        description="Uses the default rules, or with `variant` any rules of that variant (a "
        "room it opens: the default rules if they are of it, else the first configuration by "
        "name that is; none: 409 no_variant_rules). With `with_bots`, always opens a new room "
        "whose other seats bots take.",
        request=QuickJoinInput,
        responses={200: SeatSerializer, **error_responses(400, 403, 409)},
    )
    def post(self, request: Request) -> Response:
        payload = QuickJoinInput(data=request.data)
        payload.is_valid(raise_exception=True)
        seat = room_quick_join(user=request.user, **payload.validated_data)
        return Response(SeatSerializer(seat_data(seat, request)).data)


@extend_schema(tags=["lobby"])
class LeaveApi(ErrorBodyApi):
    """Stand up from the table you sit at; answers the room you left."""

    @extend_schema(
        summary="Stand up from your table",
        request=None,
        responses={200: RoomSerializer, **error_responses(403, 409)},
    )
    def post(self, request: Request) -> Response:
        room = room_leave(user=request.user)
        return Response(RoomSerializer(room_data(room.pk, request)).data)


@extend_schema(tags=["lobby"])
class RoomCloseApi(ErrorBodyApi):
    """Close a room: its owner only, and only when nobody sits in it."""

    @extend_schema(
        summary="Close an empty room you own",
        request=None,
        responses={200: RoomSerializer, **error_responses(403, 404, 409)},
    )
    def post(self, request: Request, room_id: int) -> Response:
        room = room_close(user=request.user, room_id=room_id)
        return Response(RoomSerializer(room_data(room.pk, request)).data)


@extend_schema(tags=["lobby"])
class MySeatApi(ErrorBodyApi):
    """The room and seat of the current user, if any."""

    @extend_schema(
        summary="Where you sit", responses={200: MySeatSerializer, **error_responses(403)}
    )
    def get(self, request: Request) -> Response:
        return Response(MySeatSerializer({"seat": seat_view(user=request.user)}).data)
