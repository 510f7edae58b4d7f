"""A lost house event never leaves a house page stale (issue 24, item 6): a reconnect
starts from the rows, and an open socket notices rows that moved without an event."""

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from houses import consumers
from tests.integration.web.conftest import frame, frame_with, house_socket, open_socket
from threads.models import Thread
from threads.states import State
from threads.status import Record, ThreadStatus
from threads.status_sync import write_status

pytestmark = pytest.mark.django_db(transaction=True)


def drop_house_events(monkeypatch):
    """What a Redis blip does to the sender: every house event is lost."""
    layer = get_channel_layer()
    real = layer.group_send

    async def dropped(group, message):
        if not group.startswith("house-"):
            await real(group, message)

    monkeypatch.setattr(layer, "group_send", dropped)


def blocked(world) -> None:
    thread = Thread.objects.get(pk=world.other_thread.pk)
    record = Record("thread", thread.pk, State.BLOCKED, "Needs a person")
    assert write_status(thread, ThreadStatus(State.BLOCKED, "Needs a person", [record]))


async def test_a_reconnect_reads_the_rows_an_event_was_lost_for(world, monkeypatch):
    socket = await house_socket(world.house.slug, world.member)
    drop_house_events(monkeypatch)
    await sync_to_async(blocked)(world)
    await socket.disconnect()
    again = await open_socket(f"/ws/houses/{world.house.slug}/", world.member)
    snapshot = await frame(again)
    await again.disconnect()
    assert 'id="threads"' in snapshot and "status-blocked" in snapshot


async def test_an_open_socket_resends_the_list_when_rows_moved_without_an_event(world, monkeypatch):
    monkeypatch.setattr(consumers, "RESYNC_S", 0.2)
    socket = await house_socket(world.house.slug, world.member)
    drop_house_events(monkeypatch)
    await sync_to_async(blocked)(world)
    text = await frame_with(socket, "status-blocked", timeout=10)
    assert 'id="threads"' in text  # the whole list, fresh
    await socket.disconnect()
