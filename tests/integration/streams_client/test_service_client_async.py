"""The async service client against real servers: the same operations, awaited."""

import asyncio

import pytest

from streams import errors
from tests.peers.ports import free_port

pytestmark = pytest.mark.timeout(20, func_only=True)


async def later(coro, delay: float = 0.2):
    await asyncio.sleep(delay)
    return await coro


async def test_operations(aclient, name):
    created = await aclient.create(name, ttl=60, body=[{"n": 0}])
    assert created.created and not (await aclient.create(name, ttl=60, body=[{"n": 0}])).created
    info = await aclient.head(name)
    assert info.next_offset == created.next_offset and info.ttl == 60
    first = await aclient.append(name, {"n": 1}, seq="1")
    await aclient.append_batch(name, [{"n": 2}, {"n": 3}], seq="2")
    assert (await aclient.catch_up(name)).json() == [{"n": i} for i in range(4)]
    page = await aclient.read(name, first.next_offset)
    assert page.json() == [{"n": 2}, {"n": 3}] and page.up_to_date
    with pytest.raises(errors.SeqConflict):
        await aclient.append(name, {"n": 4}, seq="2")
    closed = await aclient.close_stream(name)
    with pytest.raises(errors.StreamClosed) as caught:
        await aclient.append(name, {"n": 5})
    assert caught.value.final_offset == closed.next_offset
    assert (await aclient.catch_up(name)).closed
    await aclient.delete(name)
    with pytest.raises(errors.StreamNotFound):
        await aclient.head(name)


async def test_create_conflict_and_bad_batch(aclient, name):
    await aclient.create(name)
    with pytest.raises(errors.StreamExists):
        await aclient.create(name, content_type="text/plain")
    with pytest.raises(errors.BadRequest):
        await aclient.append_batch(name, [{"ok": 1}, b"[unclosed"])
    assert (await aclient.catch_up(name)).json() == []


async def test_long_poll_wakes_on_append(aclient, name):
    offset = (await aclient.create(name)).next_offset
    writer = asyncio.create_task(later(aclient.append(name, {"woke": True})))
    result = await aclient.long_poll(name, offset)
    await writer
    assert result.json() == [{"woke": True}] and result.cursor


async def test_tail_ends_at_close(aclient, name):
    await aclient.create(name, body=[{"n": 0}])

    async def write():
        await aclient.append(name, {"n": 1})
        await aclient.close_stream(name, {"n": 2})

    writer = asyncio.create_task(later(write()))
    seen = [m async for result in aclient.tail(name) for m in result.json()]
    await writer
    assert seen == [{"n": 0}, {"n": 1}, {"n": 2}]


async def test_long_poll_on_closed_stream_returns_at_once(aclient, name):
    await aclient.create(name, closed=True)
    tail = (await aclient.head(name)).next_offset
    result = await aclient.long_poll(name, tail)
    assert result.closed and result.messages == ()


async def test_sse_until_closed(aclient, name):
    await aclient.create(name, body=[{"n": 0}])

    async def write():
        await aclient.append(name, {"n": 1})
        await aclient.close_stream(name)

    writer = asyncio.create_task(later(write()))
    results = [result async for result in aclient.sse(name)]
    await writer
    assert [m for r in results for m in r.json()] == [{"n": 0}, {"n": 1}]
    assert results[-1].closed


async def test_sse_base64(aclient, name):
    payload = b"\x00\xff binary \r\n\x01" * 50
    await aclient.create(name, content_type="application/octet-stream", body=payload, closed=True)
    assert b"".join([r.data async for r in aclient.sse(name)]) == payload


async def test_raw_handle(aclient, name):
    await aclient.create(name, body=[{"n": 1}])
    async with aclient.open(name) as response:
        assert response.status_code == 200
        assert await response.aread() == b'[{"n":1}]'


async def test_injected_errors(server, aclient, name):
    await aclient.create(name)
    server.inject(name, status=503, retryAfter=1)
    with pytest.raises(errors.ServerError) as caught:
        await aclient.head(name)
    assert caught.value.retry_after == 1
    server.inject(name, status=413)
    with pytest.raises(errors.PayloadTooLarge):
        await aclient.append(name, {"n": 1})


async def test_transport_error():
    from streams.client import AsyncDurableStreamClient

    async with AsyncDurableStreamClient(f"http://127.0.0.1:{free_port()}") as client:
        with pytest.raises(errors.TransportError):
            await client.head("nothing")
