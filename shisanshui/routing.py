"""WebSocket routes; the lobby and table consumers are added here."""

from django.urls import URLPattern, URLResolver

from lobby.routing import websocket_urlpatterns as lobby_websocket_urlpatterns

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    *lobby_websocket_urlpatterns,
]
