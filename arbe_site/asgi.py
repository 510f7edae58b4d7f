"""ASGI entry point: Django for HTTP, the embedded Durable Streams server for
``/v1/stream/``, Channels consumers for WebSockets."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arbe_site.settings")
django_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from streams.server import create_app as create_streams_app  # noqa: E402

websocket_urlpatterns: list = []
streams_app = create_streams_app()


async def http_app(scope, receive, send):
    """``/v1/stream/…`` to the streams server (raw ASGI, no Django stack); the rest to Django."""
    if scope["path"].startswith("/v1/stream/"):
        return await streams_app(scope, receive, send)
    return await django_app(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
