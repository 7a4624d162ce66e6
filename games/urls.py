from django.urls import path

from games import views

app_name = "games"

urlpatterns = [
    path("table/<int:room_id>/", views.table, name="table"),
    path("table/<int:room_id>/watch/", views.watch, name="watch"),
    path("history/", views.history, name="history"),
    path("rounds/<int:round_id>/replay/", views.replay, name="round_replay"),
    path("matches/<int:match_id>/", views.match, name="match"),
    path("standings/", views.standings_page, name="standings"),
    path("players/<str:username>/", views.player_page, name="player"),
    path("series/<str:token>/", views.series, name="series"),
    path("series/<str:token>/scoreboard.svg", views.series_image, name="series_image"),
]
