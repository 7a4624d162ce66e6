"""The lobby page and its form posts, under /lobby/."""

from django.urls import path

from lobby import invite_views, views

app_name = "lobby"

urlpatterns = [
    path("", views.lobby, name="index"),
    path("play/", views.play, name="play"),
    path("play/wait/", views.play_wait, name="play_wait"),
    path("play/cancel/", views.play_cancel, name="play_cancel"),
    path("play/guest/", views.guest_play, name="guest_play"),
    path("create/", views.create, name="create"),
    path("create-match/", views.create_match, name="create_match"),
    path("join/", views.join, name="join"),
    path("quick-join/", views.quick_join, name="quick_join"),
    path("leave/", views.leave, name="leave"),
    path("close/", views.close, name="close"),
    path("invite/<str:token>/", invite_views.invite, name="invite"),
    path("invite-new/", invite_views.regenerate, name="invite_regenerate"),
]
