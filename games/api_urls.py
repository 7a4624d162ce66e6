"""The games app's API, under /api/games/."""

from django.urls import path

from games.history import apis
from games.live import apis as live_apis

urlpatterns = [
    path("rounds/<int:round_id>/review/", apis.RoundReviewApi.as_view(), name="api-round-review"),
    path(
        "rooms/<int:room_id>/rounds/<int:number>/review/",
        apis.TableRoundReviewApi.as_view(),
        name="api-table-round-review",
    ),
    path("matches/", live_apis.MatchCreateApi.as_view(), name="api-matches"),
    path("matches/<int:match_id>/", apis.MatchApi.as_view(), name="api-match"),
    path("series/<str:token>/", apis.SeriesApi.as_view(), name="api-series"),
    path("standings/", apis.StandingsApi.as_view(), name="api-standings"),
    path("players/<str:username>/stats/", apis.PlayerStatsApi.as_view(), name="api-player-stats"),
]
