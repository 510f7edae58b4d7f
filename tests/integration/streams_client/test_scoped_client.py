"""The scoped client through a stand-in proxy (proxy_app.py under Daphne) to real servers."""

import asyncio
import threading
import time
import uuid

import httpx
import pytest

from streams import errors, wire
from streams.scoped import AsyncScopedStreamClient, ScopedStreamClient
from tests.integration.streams_client.proxy_app import SESSION, TOKEN

pytestmark = pytest.mark.timeout(10, func_only=True)

FAST = wire.Backoff(attempts=4, base=0.01, cap=0.05)


@pytest.fixture
def thread_id(client) -> str:
    thread_id = uuid.uuid4().hex[:12]
    client.create(f"arbe-thread-{thread_id}")
    return thread_id


@pytest.fixture
def scoped(proxy_url, thread_id):
    with ScopedStreamClient(proxy_url, thread_id, token=TOKEN, backoff=FAST) as scoped:
        yield scoped


@pytest.fixture
async def ascoped(proxy_url, thread_id):
    async with AsyncScopedStreamClient(proxy_url, thread_id, token=TOKEN, backoff=FAST) as scoped:
        yield scoped


def fail_next(proxy_url: str, status: int, count: int = 1, retry_after: str | None = None):
    spec = {"status": status, "count": count, "retry_after": retry_after}
    httpx.post(f"{proxy_url}/_test/fail", json=spec).raise_for_status()


def test_urls_are_scoped(proxy_url):
    scoped = ScopedStreamClient(proxy_url, "a/b c", token=TOKEN)
    assert scoped.stream_path == "/api/threads/a%2Fb%20c/stream"
    assert scoped.entries_path == "/api/threads/a%2Fb%20c/entries"
    scoped.close()


def test_refuses_anything_but_an_api_token(proxy_url):
    with pytest.raises(ValueError):
        ScopedStreamClient(proxy_url, "t", token="the-service-secret")


def test_post_and_read(scoped):
    posted = scoped.post_chat("hello", entry_id="e1")
    assert posted.entry["id"] == "e1" and posted.entry["payload"] == {
        "type": "chat",
        "text": "hello",
    }
    assert posted.offset
    scoped.append({"type": "chat", "text": "again"})
    page = scoped.read()
    assert [e["payload"]["text"] for e in page.entries] == ["hello", "again"]
    assert page.up_to_date and not page.closed
    assert scoped.read(posted.offset).entries[0]["payload"]["text"] == "again"


def test_session_cookie_auth(proxy_url, thread_id):
    cookies = {"sessionid": SESSION}
    with ScopedStreamClient(proxy_url, thread_id, cookies=cookies) as scoped:
        scoped.post_chat("by cookie")
        assert scoped.read().entries[0]["payload"]["text"] == "by cookie"


def test_auth_failures_raise_at_once(proxy_url, thread_id):
    with ScopedStreamClient(proxy_url, thread_id, backoff=FAST) as anonymous:
        with pytest.raises(errors.Unauthorized):
            anonymous.read()
        with pytest.raises(errors.Unauthorized):
            list(anonymous.tail())
    with ScopedStreamClient(proxy_url, "forbidden", token=TOKEN) as scoped:
        with pytest.raises(errors.Forbidden):
            list(scoped.tail())
        with pytest.raises(errors.Forbidden):
            scoped.post_chat("no")
    with (
        ScopedStreamClient(proxy_url, "no-such-thread", token=TOKEN) as scoped,
        pytest.raises(errors.StreamNotFound),
    ):
        list(scoped.tail())


def test_tail_from_an_offset_tracks_offsets_and_ends_at_close(scoped, client, thread_id):
    first = scoped.post_chat("one")
    scoped.post_chat("two")

    def finish():
        scoped.post_chat("three")
        client.close_stream(f"arbe-thread-{thread_id}")

    timer = threading.Timer(0.2, finish)
    timer.start()
    texts = [entry["payload"]["text"] for entry in scoped.tail(first.offset)]
    timer.join()
    assert texts == ["two", "three"]
    assert scoped.offset == client.head(f"arbe-thread-{thread_id}").next_offset


def test_tail_retries_transient_failures(scoped, proxy_url, client, thread_id):
    scoped.post_chat("one")
    client.close_stream(f"arbe-thread-{thread_id}")
    fail_next(proxy_url, 503, count=2)
    fail_next(proxy_url, 429, retry_after="0")
    assert [e["payload"]["text"] for e in scoped.tail()] == ["one"]


def test_tail_gives_up_after_the_retry_budget(scoped, proxy_url):
    fail_next(proxy_url, 502, count=FAST.attempts)
    with pytest.raises(errors.ServerError):
        list(scoped.tail())


def test_append_retries_only_when_safe(scoped, proxy_url):
    fail_next(proxy_url, 503)
    with pytest.raises(errors.ServerError):
        scoped.post_chat("no id: a resend could duplicate")
    fail_next(proxy_url, 503)
    assert scoped.post_chat("with an id", entry_id="safe-1").entry["id"] == "safe-1"
    assert [e["id"] for e in scoped.read().entries] == ["safe-1"]


def test_sync_tail_stops_on_cancel(scoped, record_property):
    """The server would hold the long-poll 30 s; the test's limit is 10 s."""
    scoped.post_chat("first")
    cancel, got_first, stopped = threading.Event(), threading.Event(), []

    def follow():
        for _ in scoped.tail(cancel=cancel):
            got_first.set()
        stopped.append(time.monotonic())

    follower = threading.Thread(target=follow)
    follower.start()
    got_first.wait()
    time.sleep(0.3)  # let the next long-poll reach the server and wait there
    cancelled_at = time.monotonic()
    cancel.set()
    follower.join()
    record_property("cancel_latency_ms", round((stopped[0] - cancelled_at) * 1000, 2))


async def test_async_post_tail_and_close(ascoped, aclient, thread_id):
    await ascoped.post_chat("one", entry_id="a1")

    async def finish():
        await asyncio.sleep(0.2)
        await ascoped.post_chat("two")
        await aclient.close_stream(f"arbe-thread-{thread_id}")

    writer = asyncio.create_task(finish())
    texts = [entry["payload"]["text"] async for entry in ascoped.tail()]
    await writer
    assert texts == ["one", "two"]


async def test_async_tail_retries_and_raises(ascoped, proxy_url):
    fail_next(proxy_url, 500)
    fail_next(proxy_url, 401)
    with pytest.raises(errors.Unauthorized):
        [entry async for entry in ascoped.tail()]


async def test_async_tail_stops_on_task_cancel(ascoped, record_property):
    await ascoped.post_chat("first")
    got_first = asyncio.Event()

    async def follow():
        async for _ in ascoped.tail():
            got_first.set()

    task = asyncio.create_task(follow())
    await got_first.wait()
    await asyncio.sleep(0.3)  # the next long-poll is waiting at the server
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    record_property("cancel_latency_ms", round((time.monotonic() - cancelled_at) * 1000, 2))
