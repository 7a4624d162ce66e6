"""The games app's HTTP API, under /api/games/: the review of one's own hand in a settled round,
and duplicate matches (opening one, its results).

Browsers authenticate with their session, scripts with "Authorization: Token <key>". Refusals
answer {"error": {"code", "message"}} like the lobby's API: 404 ``not_found`` when there is no
such round or the user did not play it (the same answer, so nothing is revealed), 409
``round_in_play`` before the settlement, 429 over the rate limit.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

from games.history.audit import RoundInPlay
from games.history.matches import match_results
from games.history.rating import player_ratings, rated_families, rating_standings
from games.history.review import NotYourRound, round_for_review, round_review
from games.history.series import series_room, series_scoreboard
from games.history.standings import listed_player, player_stats, standings
from games.models import DuplicateMatch
from shisanshui.api import ERRORS, ErrorBodyApi, api_error


class ReviewOptionSerializer(serializers.Serializer):
    expected_water = serializers.FloatField(
        help_text="The model's expected water against this round's opponents (RULES.md §6)."
    )
    water = serializers.IntegerField(
        help_text="What it scored (played) or would have scored (best) against this round's "
        "revealed hands, the other seats unchanged."
    )
    special = serializers.CharField(allow_null=True, help_text="A declared special's id.")
    front = serializers.ListField(child=serializers.CharField(), required=False)
    middle = serializers.ListField(child=serializers.CharField(), required=False)
    back = serializers.ListField(child=serializers.CharField(), required=False)
    cards = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="A declared special's cards."
    )
    unused = serializers.ListField(
        child=serializers.CharField(), help_text="With spare cards: the 3 set aside."
    )
    jokers = serializers.DictField(
        child=serializers.CharField(),
        required=False,
        help_text="With jokers: what each joker stands for in its row.",
    )


class ReviewSerializer(serializers.Serializer):
    round_id = serializers.IntegerField()
    round_no = serializers.IntegerField()
    room_id = serializers.IntegerField()
    player = serializers.CharField(help_text="The player's user id.")
    opponents = serializers.IntegerField()
    dealt = serializers.ListField(child=serializers.CharField(), help_text="The cards dealt.")
    played = ReviewOptionSerializer(help_text="What the player played.")
    best = ReviewOptionSerializer(help_text="The engine's best arrangement of the same cards.")
    played_best = serializers.BooleanField(help_text="The player played the engine's best.")
    expected_gain = serializers.FloatField(help_text="best − played, expected water.")
    water_gain = serializers.IntegerField(help_text="best − played, against this round's hands.")


class ReviewApi(ErrorBodyApi):
    throttle_scope = "round_review"

    def get_throttles(self) -> list[Any]:
        return [*(t() for t in api_settings.DEFAULT_THROTTLE_CLASSES), ScopedRateThrottle()]

    def review(self, request: Request, **where: Any) -> Response:
        try:
            round_ = round_for_review(user_id=request.user.pk, **where)
            data = round_review(round_=round_, user_id=request.user.pk)
        except NotYourRound:
            return Response(
                api_error("not_found", _("No such round among yours.")),
                status=status.HTTP_404_NOT_FOUND,
            )
        except RoundInPlay:
            return Response(
                api_error("round_in_play", _("The round is not settled yet.")),
                status=status.HTTP_409_CONFLICT,
            )
        return Response(ReviewSerializer(data).data)


REVIEW_ERRORS = {
    403: ERRORS[403],
    404: ERRORS[404],
    409: ERRORS[409],
    429: ERRORS[429],
}


class RoundReviewApi(ReviewApi):
    @extend_schema(
        tags=["games"],
        summary="Review your hand in a settled round",
        description="Your arrangement against the engine's best arrangement of the same cards: "
        "expected water, and water against that round's revealed hands.",
        responses={200: ReviewSerializer, **REVIEW_ERRORS},
    )
    def get(self, request: Request, round_id: int) -> Response:
        return self.review(request, round_id=round_id)


class TableRoundReviewApi(ReviewApi):
    @extend_schema(
        tags=["games"],
        summary="Review your hand in a settled round, by its room and number",
        description="The same review, for the table page (which knows its room and round).",
        responses={200: ReviewSerializer, **REVIEW_ERRORS},
    )
    def get(self, request: Request, room_id: int, number: int) -> Response:
        return self.review(request, room_id=room_id, number=number)


# -- duplicate matches (games.live.duplicate)  -----------------------------------------------------


class MatchEntrySerializer(serializers.Serializer):
    table = serializers.IntegerField(help_text="The table's number in the match, from 1.")
    player = serializers.CharField(help_text="The name players see (a bot's nickname).")
    user_id = serializers.IntegerField()
    bot = serializers.BooleanField()
    water = serializers.IntegerField()
    coins = serializers.IntegerField(help_text="Coins won or lost, escape penalty included.")
    vs_par = serializers.FloatField(help_text="water − par, to 2 decimals.")
    special = serializers.CharField(allow_null=True, help_text="A declared special's id.")
    arrangement = serializers.DictField(
        allow_null=True, help_text="front, middle, back: the rows played (card texts)."
    )
    auto = serializers.CharField(allow_null=True, help_text="Why it was played for the player.")
    escaped = serializers.BooleanField()


class MatchHandSerializer(serializers.Serializer):
    position = serializers.IntegerField(
        help_text="The seat, from 0: the same cards at every table."
    )
    cards = serializers.ListField(child=serializers.CharField(), help_text="The cards dealt.")
    par = serializers.FloatField(help_text="The hand's average water over the tables.")
    entries = MatchEntrySerializer(many=True, help_text="Each table's player, best first.")


class MatchDealSerializer(serializers.Serializer):
    deal = serializers.IntegerField()
    commitment = serializers.CharField(help_text="The deal's deck commitment (every table's).")
    hands = MatchHandSerializer(many=True)


class MatchStandingSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    user_id = serializers.IntegerField()
    bot = serializers.BooleanField()
    tables = serializers.ListField(
        child=serializers.IntegerField(), help_text="The tables the player played at."
    )
    deals = serializers.IntegerField()
    water = serializers.IntegerField()
    coins = serializers.IntegerField()
    score = serializers.FloatField(help_text="The sum of water − par over the deals played.")


class MatchRoomSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The room's id (/api/lobby/rooms/<id>/).")
    table = serializers.IntegerField()


class MatchSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField(help_text="playing, finished or abandoned.")
    tables = serializers.IntegerField()
    deals = serializers.IntegerField()
    seats = serializers.IntegerField(help_text="Seats per table.")
    base_score = serializers.IntegerField()
    rules = serializers.CharField(help_text="The rule configuration's name.")
    rooms = MatchRoomSerializer(many=True)
    deals_played = serializers.IntegerField(help_text="Deals every table has settled.")
    seed_commitment = serializers.CharField(help_text="SHA-256 of the seed, from the start.")
    seed = serializers.CharField(allow_null=True, help_text="The seed, once the match is over.")
    seed_verified = serializers.BooleanField(
        allow_null=True, help_text="The revealed seed matches its commitment."
    )
    results = MatchDealSerializer(many=True, help_text="The deals every table has settled.")
    standings = MatchStandingSerializer(many=True)


class MatchApi(ErrorBodyApi):
    throttle_scope = "match_results"

    def get_throttles(self) -> list[Any]:
        return [*(t() for t in api_settings.DEFAULT_THROTTLE_CLASSES), ScopedRateThrottle()]

    @extend_schema(
        tags=["games"],
        summary="A duplicate match's results",
        description="Every deal all its tables have settled, each hand with what each table's "
        "player made of it against par, and the standings; the seed once the match is over.",
        responses={200: MatchSerializer, 403: ERRORS[403], 404: ERRORS[404], 429: ERRORS[429]},
    )
    def get(self, request: Request, match_id: int) -> Response:
        found = DuplicateMatch.objects.select_related("rules").filter(pk=match_id).first()
        if found is None:
            return Response(
                api_error("not_found", _("No such duplicate match.")),
                status=status.HTTP_404_NOT_FOUND,
            )
        return Response(MatchSerializer(match_results(found)).data)


# -- a series' scoreboard (games.history.series)  --------------------------------------------------


class SeriesApi(ErrorBodyApi):
    """Anyone with the share link's token may read it (no account needed)."""

    permission_classes = [AllowAny]
    throttle_scope = "series_scoreboard"

    def get_throttles(self) -> list[Any]:
        return [*(t() for t in api_settings.DEFAULT_THROTTLE_CLASSES), ScopedRateThrottle()]

    @extend_schema(
        tags=["games"],
        summary="A series' scoreboard, by its share link's token",
        description="Each player's water and coins per round and in total, guns fired and "
        "suffered, home runs and best hand; `finished` once the last round is settled.",
        responses={200: OpenApiTypes.OBJECT, 404: ERRORS[404], 429: ERRORS[429]},
    )
    def get(self, request: Request, token: str) -> Response:
        room = series_room(token)
        if room is None:
            return Response(
                api_error("not_found", _("No such series.")), status=status.HTTP_404_NOT_FOUND
            )
        return Response(series_scoreboard(room))


# -- standings and statistics (games.history.standings)  -------------------------------------------


class StandingsApi(ErrorBodyApi):
    throttle_scope = "standings"

    def get_throttles(self) -> list[Any]:
        return [*(t() for t in api_settings.DEFAULT_THROTTLE_CLASSES), ScopedRateThrottle()]

    @extend_schema(
        tags=["games"],
        summary="The standings, as the beat job last computed them",
        description="`period`: week (since Monday 00:00 UTC) or all; `by`: coins (net) or "
        "water (per round). Players with fewer rounds than the period's minimum are left out. "
        "`by=rating`: the skill rating (Glicko-2, rating ± deviation) in the rule `family` "
        "(default classic), of players rated from at least RATING_MIN_ROUNDS rounds.",
        parameters=[
            OpenApiParameter("period", OpenApiTypes.STR, enum=["week", "all"]),
            OpenApiParameter("by", OpenApiTypes.STR, enum=["coins", "water", "rating"]),
            OpenApiParameter("family", OpenApiTypes.STR),
        ],
        responses={200: OpenApiTypes.OBJECT, 400: ERRORS[400], 429: ERRORS[429]},
    )
    def get(self, request: Request) -> Response:
        period = request.query_params.get("period", "week")
        by = request.query_params.get("by", "coins")
        if by == "rating":
            family = request.query_params.get("family", "classic")
            if family not in rated_families():
                return Response(
                    api_error("invalid", _("family is a rule family someone is rated in.")),
                    status=status.HTTP_400_BAD_REQUEST,
                )
            return Response(rating_standings(family=family))
        try:
            data = standings(period=period, by=by)
        except ValueError:
            return Response(
                api_error("invalid", _("period is week or all; by is coins, water or rating.")),
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response(data)


class PlayerStatsApi(ErrorBodyApi):
    """One person's statistics, as the beat last computed them (games.history.standings).

    A name nobody has and a name that hides its statistics (staff, bots, deactivated accounts)
    get the same 404 after the same single query."""

    throttle_scope = "standings"

    def get_throttles(self) -> list[Any]:
        return [*(t() for t in api_settings.DEFAULT_THROTTLE_CLASSES), ScopedRateThrottle()]

    @extend_schema(
        tags=["games"],
        summary="A player's statistics, this week and all time",
        responses={200: OpenApiTypes.OBJECT, 404: ERRORS[404], 429: ERRORS[429]},
    )
    def get(self, request: Request, username: str) -> Response:
        user = listed_player(username)
        if user is None:
            return Response(
                api_error("not_found", _("No such player.")), status=status.HTTP_404_NOT_FOUND
            )
        return Response({**player_stats(user), "ratings": player_ratings(user.pk)})
