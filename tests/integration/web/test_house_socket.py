"""The house socket: thread rows and badges follow status writes; revocation closes it."""

import pytest
from asgiref.sync import sync_to_async

from houses.membership import remove_member
from houses.models import Membership
from tests.integration.web.conftest import closed_with, frame_with, house_socket, open_socket

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_status_change_moves_the_row_to_the_top_with_its_badge(world):
    socket = await house_socket(world.house.slug, world.member)
    client = await sync_to_async(world.client_for)(world.member)
    url = f"/api/threads/{world.other_thread.id}/entries"
    response = await sync_to_async(client.post)(url, {"text": "anyone?"})
    assert response.status_code == 201
    text = await frame_with(socket, f'id="thread-{world.other_thread.id}"')
    assert 'hx-swap-oob="delete"' in text
    assert 'hx-swap-oob="afterbegin:#threads"' in text
    # A plain message waits for the director: the row moves, nothing reads "working".
    assert "status-working" not in text and "waiting" not in text
    await socket.disconnect()


async def test_a_stranger_is_closed_with_4404(world):
    socket = await open_socket(f"/ws/houses/{world.house.slug}/", world.stranger)
    assert await closed_with(socket) == 4404
    await socket.disconnect()


async def test_revoking_membership_closes_the_house_socket(world):
    socket = await house_socket(world.house.slug, world.member)
    membership = await Membership.objects.aget(house=world.house, user=world.member)
    await sync_to_async(remove_member)(membership)
    assert await closed_with(socket) == 4404
    await socket.disconnect()


async def test_a_new_thread_appears_live(world):
    from threads.lifecycle import create_thread

    socket = await house_socket(world.house.slug, world.member)
    thread = await sync_to_async(create_thread)(
        house=world.house, title="Fresh topic", by=world.owner.agent
    )
    text = await frame_with(socket, f'id="thread-{thread.id}"')
    assert "Fresh topic" in text and 'hx-swap-oob="afterbegin:#threads"' in text
    await socket.disconnect()


async def test_an_entry_that_moves_no_status_still_moves_the_row(world):
    from threads.entries import PiCompaction
    from threads.lifecycle import new_entry
    from threads.recency import stream_writer, throttle

    socket = await house_socket(world.house.slug, world.member)
    throttle.reset()  # creating the threads opened recency windows
    entry = new_entry(PiCompaction(reason="manual"))
    await sync_to_async(stream_writer().append)(world.other_thread.stream_name, entry)
    text = await frame_with(socket, f'id="thread-{world.other_thread.id}"')
    assert 'hx-swap-oob="afterbegin:#threads"' in text
    await socket.disconnect()
