"""Helpers for the live pages' tests: sockets through the real auth stack."""

import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.test import Client


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    """The in-memory layer's queues belong to one event loop; each test gets a new layer."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


async def open_socket(path: str, user=None) -> WebsocketCommunicator:
    """A communicator through ``arbe_site.asgi.application``: origin check, session auth."""
    from arbe_site.asgi import application

    headers = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
    if user is not None:
        cookie = await sync_to_async(session_cookie)(user)
        headers.append((b"cookie", f"sessionid={cookie}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    return communicator


async def closed_with(communicator, timeout: float = 5) -> int | None:
    """The close code the server sent next (skipping text frames), or None."""
    while True:
        message = await communicator.receive_output(timeout)
        if message["type"] == "websocket.close":
            return message.get("code")


async def frame(communicator, timeout: float = 5) -> str:
    return await communicator.receive_from(timeout)


async def frame_with(communicator, needle: str, timeout: float = 5) -> str:
    """The next frame containing ``needle`` (the panel alone may come first)."""
    while True:
        text = await communicator.receive_from(timeout)
        if needle in text:
            return text


async def house_socket(slug: str, user) -> WebsocketCommunicator:
    """A member's house-page socket, past the list snapshot every connect starts with."""
    communicator = await open_socket(f"/ws/houses/{slug}/", user)
    assert 'id="threads"' in await communicator.receive_from(10)
    return communicator
