"""A house's group is joined once per process (arbe_lib.group_relay): thread pages' sockets
are offered each event with one call and sent only what their sidebar renders; the
one-process channel layer (arbe_site.channel_layer.ProcessChannelLayer) puts a group's
message on each member's queue in one pass."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from arbe_lib.group_relay import relays
from arbe_site.channel_layer import ProcessChannelLayer
from tests.integration.web.conftest import frame_with, open_socket
from tests.integration.web.test_sidebar import joined, post

pytestmark = pytest.mark.django_db(transaction=True)


async def members(group: str) -> int:
    layer = get_channel_layer()
    if hasattr(layer, "groups"):
        return len(layer.groups.get(group) or {})
    redis = layer.connection(layer.consistent_hash(group))
    return await redis.zcard(layer._group_key(group))


async def thread_page(world, user, thread):
    socket = await open_socket(f"/ws/threads/{thread.id}/", user)
    await frame_with(socket, 'id="stream-offset"')
    return socket


async def test_thread_pages_of_a_house_are_one_member_of_its_group(world):
    group = f"house-{world.house.pk}"
    sockets = [
        await thread_page(world, world.owner, world.thread),
        await thread_page(world, world.member, world.thread),
        await thread_page(world, world.owner, world.other_thread),
    ]
    try:
        await joined(group)
        assert await members(group) == 1
        assert len(relays().relays[group].followers) == 3
    finally:
        for socket in sockets:
            await socket.disconnect()
    for _ in range(500):  # the last one out takes the relay's membership with it
        if not await members(group):
            break
        await asyncio.sleep(0.01)
    assert await members(group) == 0 and group not in relays().relays


async def test_a_page_on_another_thread_gets_the_row_its_sidebar_moves(world):
    """(A page's own thread's news sends it nothing: test_sidebar's own-news test.)"""
    here = await thread_page(world, world.owner, world.thread)
    there = await thread_page(world, world.owner, world.other_thread)
    try:
        await sync_to_async(post)(world, world.member, "news here")
        await frame_with(there, f'id="side-{world.thread.id}"')
    finally:
        await here.disconnect()
        await there.disconnect()


async def test_a_private_threads_row_reaches_only_its_readers_pages(world):
    from threads.privacy import start_private

    secret = await sync_to_async(start_private)(
        world.house, "Just us", by=world.member.agent, members=[]
    )
    outsider = await thread_page(world, world.owner, world.thread)
    reader = await thread_page(world, world.member, world.thread)
    try:
        await sync_to_async(post)(world, world.member, "a secret", secret)
        await frame_with(reader, f'id="side-{secret.id}"')
        await sync_to_async(post)(world, world.member, "in the open", world.other_thread)
        while True:  # the outsider's sidebar hears of the open thread, never the private one
            text = await outsider.receive_from(5)
            assert secret.id not in text
            if f'id="side-{world.other_thread.id}"' in text:
                break
    finally:
        await outsider.disconnect()
        await reader.disconnect()


class Follower:
    def __init__(self, channel: str, wanted: str):
        self.channel_name, self.wanted = channel, wanted

    def wants(self, event: dict) -> bool:
        return event.get("thread") == self.wanted


async def test_the_relay_sends_each_follower_only_what_it_wants():
    layer = get_channel_layer()
    first = Follower(await layer.new_channel(), "A")
    second = Follower(await layer.new_channel(), "B")
    await relays().follow("house-relay", first)
    await relays().follow("house-relay", second)
    await layer.group_send("house-relay", {"type": "thread.row", "thread": "A"})
    await layer.group_send("house-relay", {"type": "thread.row", "thread": "B"})
    got = await asyncio.wait_for(layer.receive(first.channel_name), 5)
    assert got["thread"] == "A"
    got = await asyncio.wait_for(layer.receive(second.channel_name), 5)
    assert got["thread"] == "B"
    relays().leave("house-relay", first)
    await layer.group_send("house-relay", {"type": "thread.row", "thread": "A"})
    await layer.group_send("house-relay", {"type": "thread.row", "thread": "B"})
    got = await asyncio.wait_for(layer.receive(second.channel_name), 5)
    assert got["thread"] == "B"  # the A before it went to nobody
    relays().leave("house-relay", second)


async def test_one_pass_group_send_copies_per_member_and_skips_a_full_one():
    layer = ProcessChannelLayer(capacity=2)
    one, full, other = [await layer.new_channel() for _ in range(3)]
    for channel in (one, full, other):
        await layer.group_add("g", channel)
    await layer.send(full, {"type": "x"})
    await layer.send(full, {"type": "x"})  # at capacity
    await layer.group_send("g", {"type": "e", "ids": [1]})
    got = await layer.receive(one)
    got["ids"].append(2)  # a member's copy is its own
    assert (await layer.receive(other))["ids"] == [1]
    assert [(await layer.receive(full))["type"] for _ in range(2)] == ["x", "x"]
    # A reader keeps its queue between messages; a reader that is gone takes it along.
    waiting = asyncio.create_task(layer.receive(one))
    await asyncio.sleep(0)
    queue = layer.channels[one]
    await layer.send(one, {"type": "y"})
    assert (await waiting)["type"] == "y" and layer.channels[one] is queue
    waiting = asyncio.create_task(layer.receive(one))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert one not in layer.channels
