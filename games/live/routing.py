"""The table's WebSocket route (included by shisanshui/routing.py)."""

from django.urls import URLPattern, URLResolver, path

from games.live.consumers import TableConsumer

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    path("ws/table/<int:room_id>/", TableConsumer.as_asgi()),
]
