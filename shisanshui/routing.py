"""WebSocket routes: the lobby's and the tables'."""

from django.urls import URLPattern, URLResolver

from games.live.routing import websocket_urlpatterns as table_websocket_urlpatterns
from lobby.routing import websocket_urlpatterns as lobby_websocket_urlpatterns

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    *lobby_websocket_urlpatterns,
    *table_websocket_urlpatterns,
]
