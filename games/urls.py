from django.urls import path

from games.history import pages as history
from games.live import pages as live

app_name = "games"

urlpatterns = [
    path("table/<int:room_id>/", live.table, name="table"),
    path("table/<int:room_id>/watch/", live.watch, name="watch"),
    path("history/", history.history, name="history"),
    path("rounds/<int:round_id>/replay/", history.replay, name="round_replay"),
    path("matches/<int:match_id>/", history.match, name="match"),
    path("standings/", history.standings_page, name="standings"),
    path("players/<str:username>/", history.player_page, name="player"),
    path("series/<str:token>/", history.series, name="series"),
    path("series/<str:token>/scoreboard.svg", history.series_image, name="series_image"),
]
