"""The duplicate match API that opens a match (the reads are in games.history.apis)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from games.history.apis import MatchSerializer
from games.history.matches import match_results
from games.live.matches import match_create
from games.models import MATCH_MAX_DEALS, RuleConfiguration
from lobby.models import BotLevel
from shisanshui.api import ErrorBodyApi, error_responses


class MatchCreateInput(serializers.Serializer):
    name = serializers.CharField(max_length=200, trim_whitespace=False, required=False)
    base_score = serializers.IntegerField()
    seats = serializers.IntegerField(help_text="Seats per table: 2 to what the rules seat.")
    tables = serializers.IntegerField(help_text="2 to 4.")
    deals = serializers.IntegerField(help_text=f"1 to {MATCH_MAX_DEALS}.")
    rules = serializers.PrimaryKeyRelatedField(
        queryset=RuleConfiguration.objects.all(), required=False, allow_null=True
    )
    bots = serializers.BooleanField(
        default=False, help_text="Fill every other seat of every table with bots."
    )
    bot_level = serializers.ChoiceField(choices=BotLevel.choices, default=BotLevel.STRONG)


class MatchCreateApi(ErrorBodyApi):
    @extend_schema(
        tags=["games"],
        summary="Open a duplicate match and sit at its first table",
        description="Tables (2 to 4) with the same rules, base score and seats play the same "
        "deals in lockstep; checked like a room, one playing match per owner (409 "
        "too_many_matches), and it spends one room creation of the lobby's rate.",
        request=MatchCreateInput,
        responses={201: MatchSerializer, **error_responses(400, 403, 409, 429)},
    )
    def post(self, request: Request) -> Response:
        payload = MatchCreateInput(data=request.data)
        payload.is_valid(raise_exception=True)
        match = match_create(owner=request.user, **payload.validated_data)
        return Response(MatchSerializer(match_results(match)).data, status=status.HTTP_201_CREATED)
