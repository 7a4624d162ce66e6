"""The lobby's WebSocket route (included by shisanshui/routing.py)."""

from django.urls import URLPattern, URLResolver, path

from lobby.consumers import LobbyConsumer

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    path("ws/lobby/", LobbyConsumer.as_asgi()),
]
