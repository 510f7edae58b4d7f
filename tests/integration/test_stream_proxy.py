"""The members' read proxy: offsets pass through untouched, long-polls wait without a thread."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from threads.entries import Chat
from threads.lifecycle import new_entry
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


async def read(client, thread, **params):
    response = await client.get(f"/api/threads/{thread.id}/stream", params)
    if response.status_code == 204:  # the test client swaps a 204's body for an empty list
        return response, b""
    body = b"".join([chunk async for chunk in response.streaming_content])
    return response, body


async def test_catch_up_then_resume_from_the_offset_it_answered(world):
    client = AsyncClient()
    await sync_to_async(client.force_login)(world.member)
    response, body = await read(client, world.thread, offset="-1")
    assert response.status_code == 200
    assert response["Stream-Up-To-Date"] == "true"
    assert [e["payload"]["type"] for e in json.loads(body)] == ["signal.thread.created"]
    tail = response["Stream-Next-Offset"]

    entry = new_entry(Chat(text="after"), author=world.member.agent.id)
    await sync_to_async(stream_writer().append)(world.thread.stream_name, entry)
    response, body = await read(client, world.thread, offset=tail)
    assert [e["id"] for e in json.loads(body)] == [entry.id]
    assert response["Stream-Next-Offset"] != tail


async def test_concurrent_long_polls_all_wake_on_one_append(world):
    """Waiting long-polls must not hold the thread that sync code runs on, or they'd queue."""
    client = AsyncClient()
    await sync_to_async(client.force_login)(world.member)
    head, _ = await read(client, world.thread, offset="-1")
    tail = head["Stream-Next-Offset"]
    waits = [
        asyncio.create_task(read(client, world.thread, offset=tail, live="long-poll"))
        for _ in range(5)
    ]
    await asyncio.sleep(0.2)
    assert not any(w.done() for w in waits)
    entry = new_entry(Chat(text="wake up"), author=world.member.agent.id)
    await sync_to_async(stream_writer().append)(world.thread.stream_name, entry)
    for response, body in await asyncio.wait_for(asyncio.gather(*waits), 20):
        assert response.status_code == 200
        assert response["Stream-Cursor"]
        assert [e["id"] for e in json.loads(body)] == [entry.id]
