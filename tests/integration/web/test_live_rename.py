"""A new display name is used at once on the pages others have open: the thread tail that
renders for every viewer learns it through the channel layer (any process's tail), so a
message written after the rename carries it, without anyone reopening the thread."""

from urllib.parse import quote

import pytest
from asgiref.sync import sync_to_async

from tests.integration.web.conftest import frame, frame_with, open_socket

pytestmark = pytest.mark.django_db(transaction=True)


def post(world, user, text: str) -> str:
    response = world.client_for(user).post(
        f"/api/threads/{world.thread.id}/entries", {"text": text}
    )
    assert response.status_code == 201, response.content
    return response.json()["offset"]


async def watch(world):
    """The member's open thread page: its socket, past the catch-up."""
    offset = await sync_to_async(post)(world, world.owner, "hello")
    socket = await open_socket(
        f"/ws/threads/{world.thread.id}/?offset={quote(offset, safe='')}", world.member
    )
    await frame(socket)
    return socket


def rename(world, user, name: str) -> None:
    response = world.client_for(user).post("/account/", {"display_name": name, "time_zone": ""})
    assert response.status_code == 302, response.content


async def test_an_open_thread_uses_a_new_display_name_on_new_messages(world):
    socket = await watch(world)
    await sync_to_async(post)(world, world.author, "before the rename")
    before = await frame_with(socket, "before the rename")
    assert ">ari</strong>" in before
    await sync_to_async(rename)(world, world.author, "Ariadne Quill")
    await sync_to_async(post)(world, world.author, "after the rename")
    after = await frame_with(socket, "after the rename")
    assert ">Ariadne Quill</strong>" in after
    await socket.disconnect()


async def test_a_rename_in_another_house_changes_nothing_here(world):
    socket = await watch(world)
    await sync_to_async(rename)(world, world.stranger, "Eve Elsewhere")
    await sync_to_async(post)(world, world.author, "still ari")
    text = await frame_with(socket, "still ari")
    assert ">ari</strong>" in text and "Eve Elsewhere" not in text
    await socket.disconnect()
