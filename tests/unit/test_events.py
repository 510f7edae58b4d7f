"""arbe_lib.events: one send path that works from sync code with or without a running loop."""

import asyncio

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from arbe_lib.events import send_to_group


def _receive(layer, channel):
    return async_to_sync(asyncio.wait_for)(layer.receive(channel), 2)


def _joined(layer, group):
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group, channel)
    return channel


def test_a_sync_caller_without_a_loop_sends():
    layer = get_channel_layer()
    channel = _joined(layer, "house-a")
    assert send_to_group("house-a", {"type": "thread.row", "thread": "t1"})
    assert _receive(layer, channel) == {"type": "thread.row", "thread": "t1"}


def test_a_sync_caller_inside_a_running_loop_still_sends():
    # As a browser-driving test or a sync helper called on a loop would: async_to_sync refuses
    # there, so the send must take another thread rather than raise or be lost.
    layer = get_channel_layer()
    channel = _joined(layer, "house-b")

    async def inside():
        return send_to_group("house-b", {"type": "thread.read", "thread": "t2"})

    assert asyncio.run(inside())
    assert _receive(layer, channel) == {"type": "thread.read", "thread": "t2"}
