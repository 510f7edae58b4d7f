"""WebSocket routes of the board; ``arbe_site.asgi`` includes ``websocket_urlpatterns``."""

from django.urls import path

from boards.consumers import BoardConsumer

websocket_urlpatterns = [
    path("ws/houses/<slug:slug>/board/", BoardConsumer.as_asgi()),
]
