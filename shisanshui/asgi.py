"""The ASGI entry point: HTTP goes to Django, WebSockets to the Channels consumers."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shisanshui.settings.local")

# Django must be set up before anything that imports models (consumers, auth middleware).
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from shisanshui.origins import WebsocketOriginValidator  # noqa: E402
from shisanshui.routing import websocket_urlpatterns  # noqa: E402
from shisanshui.warm import plain_frame_log_text, warm_and_freeze  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Only pages of WEBSOCKET_ALLOWED_ORIGINS (scheme, host and port) may connect.
        "websocket": WebsocketOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)

# No log text built for every frame sent, and the start-up objects are never walked by the
# garbage collector again (shisanshui/warm.py).
plain_frame_log_text()
warm_and_freeze()
