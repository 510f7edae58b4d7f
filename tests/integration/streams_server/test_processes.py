"""Two serve_streams processes on one database: wake-ups and auth."""

import contextlib
import tempfile
import threading
import uuid

import httpx
import pytest

from tests.peers import postgres
from tests.peers.embedded import migrate, serve_streams

JSON = {"Content-Type": "application/json"}
# Long enough that a long-poll which wasn't woken would fail the test by timing out (204).
LONG_POLL_MS = 20_000


def assert_long_poll_woken_by_other_process(reader_url: str, writer_url: str) -> None:
    path = f"/v1/stream/wake/{uuid.uuid4().hex}"
    with (
        httpx.Client(base_url=writer_url, timeout=60) as writer,
        httpx.Client(base_url=reader_url, timeout=60) as reader,
    ):
        assert writer.put(path, headers=JSON).status_code == 201
        offset = reader.head(path).headers["Stream-Next-Offset"]
        result = {}

        def poll() -> None:
            result["response"] = reader.get(path, params={"offset": offset, "live": "long-poll"})

        thread = threading.Thread(target=poll)
        thread.start()
        threading.Event().wait(0.3)  # let the long-poll start waiting (not asserted)
        assert writer.post(path, json={"from": "the other process"}).status_code == 204
        thread.join()
        response = result["response"]
        assert response.status_code == 200
        assert response.json() == [{"from": "the other process"}]
        assert response.headers["Stream-Cursor"]


@pytest.fixture(scope="module")
def sqlite_pair():
    with tempfile.TemporaryDirectory(prefix="arbe-ds-pair-") as tmp:
        url = f"sqlite:///{tmp}/pair.sqlite3"
        migrate(url, tmp)
        with (
            serve_streams(url, tmp, long_poll_ms=LONG_POLL_MS) as a,
            serve_streams(url, tmp, long_poll_ms=LONG_POLL_MS) as b,
        ):
            yield a, b


def test_sqlite_long_poll_woken_by_append_in_another_process(sqlite_pair):
    a, b = sqlite_pair
    assert_long_poll_woken_by_other_process(a.url, b.url)


@contextlib.contextmanager
def postgres_pair(server_url: str):
    """Two serve_streams processes on one fresh, migrated Postgres database."""
    url = postgres.create_database(server_url)
    try:
        with tempfile.TemporaryDirectory(prefix="arbe-ds-pg-") as tmp:
            migrate(url, tmp)
            with (
                serve_streams(url, tmp, long_poll_ms=LONG_POLL_MS) as a,
                serve_streams(url, tmp, long_poll_ms=LONG_POLL_MS) as b,
            ):
                yield a, b
    finally:
        postgres.drop_database(url)


@pytest.mark.postgres
def test_postgres_long_poll_woken_by_notify_from_another_process(postgres_server_url):
    with postgres_pair(postgres_server_url) as (a, b):
        assert_long_poll_woken_by_other_process(a.url, b.url)


def test_bearer_auth_when_a_secret_is_set(embedded_ds):
    secret = uuid.uuid4().hex
    with (
        tempfile.TemporaryDirectory() as tmp,
        serve_streams(embedded_ds.database_url, tmp, secret=secret) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        path = f"/v1/stream/auth/{uuid.uuid4().hex}"
        assert client.put(path).status_code == 401
        assert client.put(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
        good = {"Authorization": f"Bearer {secret}"}
        assert client.put(path, headers=good).status_code == 201
        assert client.head(path, headers=good).status_code == 200
        # CORS preflights carry no credentials.
        assert client.options(path).status_code == 204


def assert_interleaved_appends_land_once_in_order(a_url: str, b_url: str, rounds: int = 60):
    """Two processes append to one stream in turn, so each one's cached view of the stream
    row is stale on every other call: the one-statement fast path must fall back to the
    locked path, and every message must land once with strictly increasing offsets."""
    path = f"/v1/stream/interleave/{uuid.uuid4().hex}"
    with (
        httpx.Client(base_url=a_url, timeout=60) as a,
        httpx.Client(base_url=b_url, timeout=60) as b,
    ):
        assert a.put(path, headers=JSON).status_code == 201
        offsets = []
        for n in range(rounds):
            writer = a if n % 2 == 0 else b
            response = writer.post(path, json={"n": n})
            assert response.status_code == 204, response.text
            offsets.append(response.headers["Stream-Next-Offset"])
        assert offsets == sorted(offsets) and len(set(offsets)) == rounds
        for reader in (a, b):
            body = reader.get(path, params={"offset": "-1"}).json()
            assert body == [{"n": n} for n in range(rounds)]


def test_sqlite_interleaved_appends_from_two_processes(sqlite_pair):
    a, b = sqlite_pair
    assert_interleaved_appends_land_once_in_order(a.url, b.url)


@pytest.mark.postgres
def test_postgres_interleaved_appends_from_two_processes(postgres_server_url):
    with postgres_pair(postgres_server_url) as (a, b):
        assert_interleaved_appends_land_once_in_order(a.url, b.url)
