"""The settings factories and the embedded server called in-process (no socket)."""

import threading
import uuid

import pytest

from streams import client as client_module
from streams import errors
from streams.client import EMBEDDED_URL, async_service_client, service_client

pytestmark = [pytest.mark.timeout(30, func_only=True), pytest.mark.django_db(transaction=True)]


@pytest.fixture
def embedded(settings):
    settings.DURABLE_STREAMS_URL = ""
    settings.DURABLE_STREAMS_SECRET = "in-process-secret"
    settings.DURABLE_STREAMS_LONG_POLL_MS = 30_000
    client_module._embedded_app.cache_clear()
    yield
    client_module._embedded_app.cache_clear()


@pytest.fixture
def name() -> str:
    return f"test/in-process-{uuid.uuid4().hex[:12]}"


def test_factory_reads_the_url(settings):
    settings.DURABLE_STREAMS_URL = "http://127.0.0.1:4437"
    settings.DURABLE_STREAMS_SECRET = "s"
    with service_client() as client:
        assert client.base_url == "http://127.0.0.1:4437"
        assert client.http.headers["authorization"] == "Bearer s"


def test_sync_in_process(embedded, name):
    with service_client() as client:
        assert client.base_url == EMBEDDED_URL
        client.create(name, body=[{"n": 0}])
        offset = client.head(name).next_offset
        timer = threading.Timer(0.2, lambda: client.close_stream(name, {"n": 1}))
        timer.start()
        woke = client.long_poll(name, offset)  # wakes on the append, long before 30 s
        timer.join()
        assert woke.json() == [{"n": 1}]
        assert [m for r in client.tail(name) for m in r.json()] == [{"n": 0}, {"n": 1}]
        with pytest.raises(errors.StreamClosed):
            client.append(name, {"n": 2})


def test_sync_in_process_from_threads(embedded, name):
    with service_client() as client:
        client.create(name)
        threads = [threading.Thread(target=client.append, args=(name, {"n": n})) for n in range(5)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(m["n"] for m in client.catch_up(name).json()) == list(range(5))


async def test_async_in_process(embedded, name):
    async with async_service_client() as client:
        await client.create(name, body=[{"n": 0}])
        await client.close_stream(name, {"n": 1})
        results = [result async for result in client.sse(name)]
        assert [m for r in results for m in r.json()] == [{"n": 0}, {"n": 1}]
        assert results[-1].closed
