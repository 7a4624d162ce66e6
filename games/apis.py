"""The games app's HTTP API, under /api/games/: the review of one's own hand in a settled round.

Browsers authenticate with their session, scripts with "Authorization: Token <key>". Refusals
answer {"error": {"code", "message"}} like the lobby's API: 404 ``not_found`` when there is no
such round or the user did not play it (the same answer, so nothing is revealed), 409
``round_in_play`` before the settlement, 429 over the rate limit.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

from games.audit import RoundInPlay
from games.review import NotYourRound, round_for_review, round_review
from lobby.apis import ERRORS, LobbyApi, error_body


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


class ReviewApi(LobbyApi):
    throttle_scope = "round_review"

    def get_throttles(self) -> list[Any]:
        return [*(t() for t in api_settings.DEFAULT_THROTTLE_CLASSES), ScopedRateThrottle()]

    def review(self, request: Request, **where: Any) -> Response:
        try:
            round_ = round_for_review(user_id=request.user.pk, **where)
            data = round_review(round_=round_, user_id=request.user.pk)
        except NotYourRound:
            return Response(
                error_body("not_found", _("No such round among yours.")),
                status=status.HTTP_404_NOT_FOUND,
            )
        except RoundInPlay:
            return Response(
                error_body("round_in_play", _("The round is not settled yet.")),
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
