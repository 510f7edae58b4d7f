"""The thread socket renders on render threads, never on the event loop, in offset order.

Every chat render (``threads.markup.render``) and every template the live fragments
use (``threads.fragments.render_to_string``) records whether an event loop runs on
its thread: a slow render there would hold every request and socket of the process.
"""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from django.db.backends.base.base import BaseDatabaseWrapper

from tests.integration.web.conftest import frame, frame_with, open_socket
from tests.integration.web.test_thread_socket import path, post
from threads import fragments, markup

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def renders(monkeypatch):
    """``(what, on a loop?, thread name)`` for each render while the test runs."""
    seen: list[tuple[str, bool, str]] = []

    def recorded(what, real):
        def call(*args, **kwargs):
            try:
                asyncio.get_running_loop()
                on_loop = True
            except RuntimeError:
                on_loop = False
            seen.append((what, on_loop, threading.current_thread().name))
            return real(*args, **kwargs)

        return call

    markup._cached_html.cache_clear()
    monkeypatch.setattr(markup, "render", recorded("chat", markup.render))
    # Render threads read nothing from the database (each would keep a connection open).
    monkeypatch.setattr(
        BaseDatabaseWrapper, "connect", recorded("database", BaseDatabaseWrapper.connect)
    )
    monkeypatch.setattr(
        fragments, "render_to_string", recorded("template", fragments.render_to_string)
    )
    yield seen
    markup._cached_html.cache_clear()


async def test_catch_up_seed_and_live_batches_render_off_the_loop(world, renders):
    first = await sync_to_async(post)(world, world.member, "before the socket")
    missed = await sync_to_async(post)(world, world.member, "**missed** while away")
    socket = await open_socket(path(world, first["offset"]), world.member)
    assert "<strong>missed</strong>" in await frame(socket)  # the catch-up

    live = await sync_to_async(post)(world, world.author, "_live_ now")
    text = await frame_with(socket, f'id="entry-{live["entry"]["id"]}"')
    assert "<em>live</em>" in text
    await socket.disconnect()

    chats = [r for r in renders if r[0] == "chat"]
    assert len(chats) >= 2 and any(r[0] == "template" for r in renders)
    assert [r for r in renders if r[1] and r[0] != "database"] == [], "rendered on the loop"
    assert all(name.startswith("arbe-render") for _, _, name in chats), chats
    connects = [name for what, _, name in renders if what == "database"]
    assert not [name for name in connects if name.startswith("arbe-render")], connects
    assert missed["entry"]["id"] not in text  # sent once, by the catch-up


async def test_live_batches_arrive_in_offset_order(world):
    head = await sync_to_async(post)(world, world.member, "start")
    socket = await open_socket(path(world, head["offset"]), world.member)
    await frame(socket)
    posted = [await sync_to_async(post)(world, world.member, f"message {i}") for i in range(6)]
    offsets = [p["offset"] for p in posted]
    seen: list[str] = []
    while offsets[-1] not in seen:
        text = await frame(socket)
        seen += [o for o in offsets if f'data-offset="{o}"' in text]
    # Offsets are opaque: compared only with the ones the appends returned, in their order.
    assert seen == sorted(seen, key=offsets.index)
    await socket.disconnect()
