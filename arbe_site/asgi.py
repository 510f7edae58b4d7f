"""ASGI entry point: Django for HTTP, the embedded Durable Streams server for
``/v1/stream/``, Channels consumers for WebSockets.

Static files are served here, from the finders, by Django's ASGI static handler: a
sync-only static middleware would force every async view (the stream proxy's
long-polls) onto a worker thread.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arbe_site.settings")
django_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.urls import path  # noqa: E402

from arbe_lib.runtime import settle_runtime  # noqa: E402
from attachments.asgi import cap_uploads  # noqa: E402
from boards.routing import websocket_urlpatterns as board_websocket_urlpatterns  # noqa: E402
from dispatch.backstage import start_with_web  # noqa: E402
from houses.consumers import HouseConsumer  # noqa: E402
from houses.home_socket import HomeConsumer  # noqa: E402
from ops.asgi import observed_http, observed_websocket  # noqa: E402
from streams.server import create_app as create_streams_app  # noqa: E402
from threads.consumers import ThreadConsumer  # noqa: E402

websocket_urlpatterns = [
    *board_websocket_urlpatterns,  # ws/houses/<slug>/board/, before the house route
    path("ws/threads/<str:thread_id>/", ThreadConsumer.as_asgi()),
    path("ws/houses/<slug:slug>/", HouseConsumer.as_asgi()),
    path("ws/home/", HomeConsumer.as_asgi()),
]
streams_app = create_streams_app()
django_with_static = cap_uploads(ASGIStaticFilesHandler(django_app))


async def http_app(scope, receive, send):
    """``/v1/stream/…`` to the streams server (raw ASGI, no Django stack); the rest to Django."""
    if scope["path"].startswith("/v1/stream/"):
        return await streams_app(scope, receive, send)
    return await django_with_static(scope, receive, send)


application = ProtocolTypeRouter(
    {
        # Probes, request ids, metrics and access lines wrap everything (ops/asgi.py).
        "http": observed_http(http_app),
        "websocket": observed_websocket(
            AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)
settle_runtime()
start_with_web()  # the embedded backstage and its sweep run from the start
