"""The Redis channel layer under a burst: more commands at once than its pool holds."""

import asyncio
import os

import pytest
from channels.layers import get_channel_layer

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis")


async def test_a_burst_past_the_pool_size_waits_instead_of_failing():
    from arbe_site.channel_layer import POOL_SIZE

    layer = get_channel_layer()
    channels = [await layer.new_channel() for _ in range(POOL_SIZE * 3)]
    await asyncio.gather(*(layer.group_add("burst", c) for c in channels))
    await layer.group_send("burst", {"type": "ping"})
    got = await asyncio.gather(*(layer.receive(c) for c in channels[:5]))
    assert [m["type"] for m in got] == ["ping"] * 5
    await asyncio.gather(*(layer.group_discard("burst", c) for c in channels))
    # No ``flush()``: it closes the pools of every loop of this process, and an in-process
    # backstage engine of an earlier test may be using its own right now. The unread pings
    # expire with their channels.
