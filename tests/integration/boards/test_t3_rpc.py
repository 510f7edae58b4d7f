"""The Effect RPC client against the fake T3 server (the real Effect 4.0.5 RPC server)."""

import asyncio

import pytest

from boards.t3.rpc import (
    AuthFailed,
    Client,
    ConnectionLost,
    ExitFailure,
    ProtocolMismatch,
    StreamChunk,
    StreamDone,
    StreamError,
)

SNAPSHOT = {
    "kind": "snapshot",
    "snapshot": {
        "schemaVersion": 2,
        "snapshotSequence": 7,
        "projects": [],
        "threads": [{"id": "t1", "title": "One", "status": "idle", "latestVisibleMessage": None}],
        "archivedThreads": [],
    },
}
ENRICHMENT = {
    "kind": "snapshot",
    "resolvedRepositoryIdentityRoots": ["/repo"],
    "snapshot": {**SNAPSHOT["snapshot"], "threads": []},
}
UPDATES = [
    [{"kind": "thread.updated", "sequence": n, "location": "active", "thread": {"id": f"t{n}"}}]
    for n in (8, 11, 15)
]
PROJECTION = {
    "thread": {"id": "t1", "title": "One", "archivedAt": None, "deletedAt": None},
    "runs": [],
    "messages": [],
}
SCRIPT = {
    "shell": [[SNAPSHOT, ENRICHMENT], *UPDATES],
    "shellEnd": "done",
    "threads": {"t1": {"projection": PROJECTION, "stream": [[{"kind": "snapshot"}]]}},
}


async def next_event(subscription, timeout=5.0):
    return await asyncio.wait_for(anext(subscription), timeout)


async def test_subscribe_acks_each_chunk_and_ends_done(t3_server):
    server = t3_server(SCRIPT)
    client = await Client.connect(server.url, token=server.token)
    try:
        subscription = await client.subscribe(
            "orchestration.subscribeShell", {"requestCompletionMarker": True}
        )
        received = []
        async for event in subscription:
            received.append(event)
            if isinstance(event, StreamChunk):
                await client.ack(subscription)
        chunks = [event.values for event in received if isinstance(event, StreamChunk)]
        assert chunks == [[SNAPSHOT, ENRICHMENT], [{"kind": "synchronized"}], *UPDATES]
        assert received[-1] == StreamDone(None)
    finally:
        await client.close()


async def test_no_second_chunk_before_the_ack(t3_server):
    server = t3_server(SCRIPT)
    client = await Client.connect(server.url, token=server.token, auth="bearer")
    try:
        subscription = await client.subscribe("orchestration.subscribeShell", {})
        first = await next_event(subscription)
        assert first.values[0]["kind"] == "snapshot"
        with pytest.raises(TimeoutError):
            await next_event(subscription, timeout=0.5)
        await client.ack(subscription)
        assert (await next_event(subscription)).values == UPDATES[0]
        await client.ack(subscription)
        with pytest.raises(RuntimeError, match="no chunk waiting"):
            await client.ack(subscription)  # exactly once per chunk
    finally:
        await client.close()


async def test_unsubscribe_interrupts_the_stream(t3_server):
    server = t3_server({**SCRIPT, "shellEnd": "live"})
    client = await Client.connect(server.url, token=server.token)
    try:
        subscription = await client.subscribe("orchestration.subscribeShell", {})
        await next_event(subscription)
        await client.unsubscribe(subscription)
        assert subscription.finished.is_set()
        with pytest.raises(StopAsyncIteration):
            await next_event(subscription)
        # The socket stays usable for other requests.
        assert (
            await client.call("orchestration.getThreadProjection", {"threadId": "t1"}) == PROJECTION
        )
    finally:
        await client.close()


async def test_unary_call_and_its_failure_exits(t3_server):
    server = t3_server(SCRIPT)
    client = await Client.connect(server.url, token=server.token)
    try:
        assert (
            await client.call("orchestration.getThreadProjection", {"threadId": "t1"}) == PROJECTION
        )
        with pytest.raises(ExitFailure) as failed:
            await client.call("orchestration.getThreadProjection", {"threadId": "nope"})
        assert failed.value.error_tag == "OrchestrationV2GetThreadProjectionError"
        assert failed.value.errors[0]["threadId"] == "nope"
        with pytest.raises(ExitFailure) as died:
            await client.call("orchestration.getThreadProjection", {})
        assert "threadId" in str(died.value.defects[0])
        with pytest.raises(ExitFailure) as unknown:
            await client.call("orchestration.nope", {})
        assert "Unknown request tag" in str(unknown.value.defects[0])
    finally:
        await client.close()


async def test_a_failing_stream_ends_with_an_error(t3_server):
    server = t3_server({**SCRIPT, "shellEnd": "fail"})
    client = await Client.connect(server.url, token=server.token)
    try:
        subscription = await client.subscribe("orchestration.subscribeThread", {"threadId": "x"})
        event = await next_event(subscription)
        assert isinstance(event, StreamError)
        assert event.error.error_tag == "OrchestrationV2GetThreadProjectionError"
        shell = await client.subscribe("orchestration.subscribeShell", {})
        events = []
        async for event in shell:
            events.append(event)
            if isinstance(event, StreamChunk):
                await client.ack(shell)
        assert events[-1].error.error_tag == "OrchestrationV2GetShellSnapshotError"
    finally:
        await client.close()


async def test_refusals_401_and_426(t3_server):
    server = t3_server(SCRIPT)
    with pytest.raises(AuthFailed):
        await Client.connect(server.url, token="wrong")
    with pytest.raises(AuthFailed):
        await Client.connect(server.url, token="wrong", auth="bearer")
    with pytest.raises(AuthFailed):
        await Client.connect(server.url)


async def test_426_comes_before_auth(t3_server, monkeypatch):
    from boards.t3 import rpc

    server = t3_server(SCRIPT)
    monkeypatch.setattr(rpc, "PROTOCOL_VERSION", "1")
    with pytest.raises(ProtocolMismatch, match="426"):
        await Client.connect(
            server.url.replace("http", "ws") + "/ws"
        )  # no credential at all: still 426, not 401


async def test_server_going_away_ends_subscriptions(t3_server):
    server = t3_server({**SCRIPT, "shellEnd": "live"})
    client = await Client.connect(server.url, token=server.token)
    try:
        subscription = await client.subscribe("orchestration.subscribeShell", {})
        await next_event(subscription)
        server.stop()
        event = await next_event(subscription)
        assert isinstance(event, StreamError)
        assert isinstance(event.error, ConnectionLost)
        with pytest.raises(ConnectionLost):
            await client.subscribe("orchestration.subscribeShell", {})
    finally:
        await client.close()
