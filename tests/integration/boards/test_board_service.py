"""The board service against the fake T3 server: folding, storing, reconnecting, robustness."""

import asyncio
import contextlib
import json

import pytest
import websockets
from asgiref.sync import sync_to_async
from websockets.asyncio.server import serve

from boards.models import BoardRow, T3Host
from boards.service import Backoff, HostSubscriber
from boards.t3.rpc import Client, StreamChunk, StreamError
from tests.factories import make_house, make_user
from tests.peers.ports import free_port
from tests.t3_items import enrichment, shell_snapshot, shell_thread

pytestmark = pytest.mark.django_db(transaction=True)


def thread(thread_id, title=None, status="idle", **fields):
    return shell_thread(thread_id, title=title or thread_id.upper(), status=status, **fields)


def snapshot(*threads, sequence=10):
    return shell_snapshot(*threads, sequence=sequence)


ENRICHMENT = enrichment(["/repo"], sequence=10)


def stored(host_id):
    return {
        row.thread_id: (row.title, row.state)
        for row in BoardRow.objects.filter(host_id=host_id).order_by("thread_id")
    }


async def converge(host_id, expected, timeout=15.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        now = await sync_to_async(stored)(host_id)
        if now == expected:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"board is {now}, expected {expected}")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def following(host):
    subscriber = HostSubscriber(host.pk, backoff=Backoff(base=0.05, cap=0.3))
    task = asyncio.create_task(subscriber.run())
    try:
        yield subscriber
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def make_host(server):
    def create():
        house = make_house("h", owner=make_user("owner"))
        return T3Host.objects.create(house=house, label="ws", url=server.url, token=server.token)

    return await sync_to_async(create)()


async def test_subscriber_folds_stores_and_follows_live_deltas(t3_server):
    server = t3_server(
        {"shell": [[snapshot(thread("t1"), thread("t2", status="running")), ENRICHMENT]]}
    )
    host = await make_host(server)
    async with following(host) as subscriber:
        await converge(host.pk, {"t1": ("T1", "idle"), "t2": ("T2", "running")})
        await asyncio.wait_for(subscriber.connected.wait(), 5)
        await asyncio.to_thread(
            server.push,
            [
                {"kind": "synchronized"},
                {
                    "kind": "thread.updated",
                    "sequence": 14,
                    "location": "active",
                    "thread": thread("t3", "New"),
                },
                {"kind": "thread.removed", "sequence": 19, "location": "active", "threadId": "t1"},
            ],
        )
        await converge(host.pk, {"t2": ("T2", "running"), "t3": ("New", "idle")})
    row = await sync_to_async(BoardRow.objects.get)(host=host, thread_id="t3")
    assert row.meta["sequence"] == 14  # meta is stored with the row


async def test_server_restart_reconnects_and_the_board_converges(t3_server):
    server = t3_server({"shell": [[snapshot(thread("t1"), thread("t2"))]]})
    host = await make_host(server)
    async with following(host) as subscriber:
        await converge(host.pk, {"t1": ("T1", "idle"), "t2": ("T2", "idle")})
        await asyncio.to_thread(server.stop)
        await asyncio.sleep(0.3)  # a few failed reconnects, with backoff
        await asyncio.to_thread(
            server.start, {"shell": [[snapshot(thread("t2", status="completed"), thread("t3"))]]}
        )
        await converge(host.pk, {"t2": ("T2", "completed"), "t3": ("T3", "idle")})
        assert subscriber.connected.is_set()


async def test_malformed_items_never_crash_the_service_or_corrupt_the_board(t3_server):
    server = t3_server({"shell": [[snapshot(thread("t1"), thread("t2"))]]})
    host = await make_host(server)
    async with following(host) as subscriber:
        await converge(host.pk, {"t1": ("T1", "idle"), "t2": ("T2", "idle")})
        await asyncio.wait_for(subscriber.connected.wait(), 5)
        junk = [
            None,
            "x",
            {"kind": "snapshot", "snapshot": {"threads": "garbled"}},
            {"kind": "thread.updated", "thread": {"no": "id"}},
            {"kind": "event", "event": {"type": "run.updated", "payload": []}},
            {"kind": "made.up"},
        ]
        await asyncio.to_thread(server.push, junk)
        await asyncio.to_thread(
            server.push,
            [
                {
                    "kind": "thread.updated",
                    "sequence": 30,
                    "location": "active",
                    "thread": thread("t2", "Two"),
                }
            ],
        )
        await converge(host.pk, {"t1": ("T1", "idle"), "t2": ("Two", "idle")})


async def test_malformed_frames_end_only_their_request():
    """A raw server: garbage, a frame for no one, a garbled chunk, then a good chunk."""
    good = {"_tag": "Chunk", "requestId": "2", "values": [snapshot(thread("t1"))]}
    frames = [
        "{not json",
        json.dumps({"_tag": "Mystery"}),
        json.dumps({"_tag": "Chunk", "requestId": "99", "values": [1]}),
        json.dumps({"_tag": "Chunk", "requestId": "1", "values": "garbled"}),
        json.dumps(good),
    ]

    async def handler(socket):
        async for data in socket:
            if json.loads(data).get("id") == "2":
                for frame in frames:
                    await socket.send(frame)

    port = free_port()
    async with serve(handler, "127.0.0.1", port):
        client = await Client.connect(f"http://127.0.0.1:{port}")
        try:
            first = await client.subscribe("orchestration.subscribeShell", {})
            second = await client.subscribe("orchestration.subscribeShell", {})
            broken = await asyncio.wait_for(anext(first), 5)
            assert isinstance(broken, StreamError)
            chunk = await asyncio.wait_for(anext(second), 5)
            assert isinstance(chunk, StreamChunk) and chunk.values == good["values"]
        finally:
            await client.close()


async def test_dead_after_silence():
    """A server that never answers pings: the client gives the socket up."""

    async def handler(socket):
        with contextlib.suppress(websockets.ConnectionClosed):
            await asyncio.sleep(30)

    port = free_port()
    async with serve(handler, "127.0.0.1", port):
        client = await Client.connect(f"http://127.0.0.1:{port}", ping_interval=0.1, dead_after=0.3)
        subscription = await client.subscribe("orchestration.subscribeShell", {})
        event = await asyncio.wait_for(anext(subscription), 5)
        assert isinstance(event, StreamError) and "no frame" in str(event.error)
        await client.close()


async def test_archived_threads_read_archived_whichever_stream_says_so_first(t3_server):
    """Seed 001: archived rows use "archived". The main shell only says "removed"; the
    archived shell holds them (issue 24, item 8)."""
    server = t3_server(
        {
            "shell": [[snapshot(thread("t1"), thread("t2"), thread("t3"))]],
            "archivedShell": [[snapshot(thread("old", "Old"))]],
        }
    )
    host = await make_host(server)
    async with following(host) as subscriber:
        await converge(
            host.pk,
            {
                "old": ("Old", "archived"),
                "t1": ("T1", "idle"),
                "t2": ("T2", "idle"),
                "t3": ("T3", "idle"),
            },
        )
        await asyncio.wait_for(subscriber.connected.wait(), 5)
        removed = {"kind": "thread.removed", "sequence": 20, "location": "active"}
        # t1: the main shell first, then the archived shell.
        await asyncio.to_thread(server.push, [removed | {"threadId": "t1"}])
        archived = {"kind": "thread.updated", "sequence": 21, "thread": thread("t1")}
        await asyncio.to_thread(server.push, [archived], archived=True)
        # t2: the archived shell first, then the main shell.
        archived = {"kind": "thread.updated", "sequence": 22, "thread": thread("t2")}
        await asyncio.to_thread(server.push, [archived], archived=True)
        await asyncio.to_thread(server.push, [removed | {"threadId": "t2", "sequence": 23}])
        # t3 is deleted: gone from both.
        await asyncio.to_thread(server.push, [removed | {"threadId": "t3", "sequence": 24}])
        # "old" is brought back: the archived shell removes it, the main shell lists it.
        back = {"kind": "thread.removed", "sequence": 25, "threadId": "old"}
        await asyncio.to_thread(server.push, [back], archived=True)
        active = {"kind": "thread.updated", "sequence": 26, "location": "active"}
        await asyncio.to_thread(server.push, [active | {"thread": thread("old", "Old")}])
        await converge(
            host.pk,
            {"old": ("Old", "idle"), "t1": ("T1", "archived"), "t2": ("T2", "archived")},
        )


async def test_a_host_without_the_archived_shell_still_shows_its_threads(t3_server):
    server = t3_server({"shell": [[snapshot(thread("t1"))]], "noArchivedShell": True})
    host = await make_host(server)
    async with following(host) as subscriber:
        await converge(host.pk, {"t1": ("T1", "idle")})
        await asyncio.wait_for(subscriber.connected.wait(), 5)
        await asyncio.to_thread(
            server.push,
            [
                {
                    "kind": "thread.updated",
                    "sequence": 30,
                    "location": "active",
                    "thread": thread("t2"),
                }
            ],
        )
        await converge(host.pk, {"t1": ("T1", "idle"), "t2": ("T2", "idle")})
