"""Servers for the stream clients' suite: each test runs against the reference Node
server and the embedded server, both over HTTP on free loopback ports.

Both answer long-polls after 30 s (as in production) unless a test asks for the
``short`` server (500 ms), which it does only to see a timed-out long-poll's 204.
"""

import contextlib
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from streams.client import AsyncDurableStreamClient, DurableStreamClient
from tests.peers.ports import free_port, stop, wait_for_port
from tests.peers.reference import reference_server

SECRET = "client-suite-secret"
LONG_POLL_MS = 30_000
SHORT_POLL_MS = 500
ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Server:
    """A Durable Streams server under test; ``kind`` is ``reference`` or ``embedded``."""

    kind: str
    url: str
    secret: str | None = None
    long_poll_ms: int = LONG_POLL_MS
    _proxy: str | None = field(default=None, repr=False)

    def inject(self, name: str, **fault) -> None:
        """Make the reference server answer the next request to stream ``name`` with a fault."""
        if self.kind != "reference":
            pytest.skip(f"the {self.kind} server has no fault injection")
        path = f"/v1/stream/{name}"
        httpx.post(
            f"{self.url}/_test/inject-error", json={"path": path, **fault}
        ).raise_for_status()


@contextlib.contextmanager
def embedded_server(long_poll_ms: int) -> Iterator[str]:
    """``manage.py serve_streams`` with a known secret, via the embedded peer's helpers."""
    try:
        from tests.peers.embedded import fresh_database, serve_streams
    except ImportError as exc:  # the embedded server's peer module is not there yet
        pytest.skip(f"embedded server peer unavailable: {exc}")
    with (
        tempfile.TemporaryDirectory(prefix="arbe-ds-client-") as tmp,
        fresh_database(tmp) as database_url,
        serve_streams(database_url, tmp, secret=SECRET, long_poll_ms=long_poll_ms) as server,
    ):
        yield server.url


class _Servers:
    """Starts each (kind, long-poll) server once per session, on first use."""

    def __init__(self):
        self._stack = contextlib.ExitStack()
        self._servers: dict[tuple[str, int], Server] = {}

    def get(self, kind: str, long_poll_ms: int = LONG_POLL_MS) -> Server:
        key = (kind, long_poll_ms)
        if key not in self._servers:
            if kind == "reference":
                url = self._stack.enter_context(reference_server(long_poll_ms=long_poll_ms))
                server = Server(kind, url, None, long_poll_ms)
            else:
                url = self._stack.enter_context(embedded_server(long_poll_ms))
                server = Server(kind, url, SECRET, long_poll_ms)
            self._servers[key] = server
        return self._servers[key]

    def close(self):
        self._stack.close()


@pytest.fixture(scope="session")
def servers() -> Iterator[_Servers]:
    registry = _Servers()
    yield registry
    registry.close()


@pytest.fixture(params=["reference", "embedded"])
def server(request, servers) -> Server:
    return servers.get(request.param)


@pytest.fixture
def short_server(server, servers) -> Server:
    """The same kind of server as ``server``, with 500 ms long-polls."""
    return servers.get(server.kind, SHORT_POLL_MS)


@pytest.fixture
def name() -> str:
    return f"test/client-{uuid.uuid4().hex[:12]}"


def make_client(server: Server, **kwargs) -> DurableStreamClient:
    return DurableStreamClient(
        server.url, secret=server.secret, long_poll_timeout=server.long_poll_ms / 1000, **kwargs
    )


def make_async_client(server: Server, **kwargs) -> AsyncDurableStreamClient:
    return AsyncDurableStreamClient(
        server.url, secret=server.secret, long_poll_timeout=server.long_poll_ms / 1000, **kwargs
    )


@pytest.fixture
def client(server) -> Iterator[DurableStreamClient]:
    with make_client(server) as client:
        yield client


@pytest.fixture
async def aclient(server) -> AsyncDurableStreamClient:
    async with make_async_client(server) as client:
        yield client


# The scoped client's proxy: a tiny ASGI app (proxy_app.py) under Daphne, one per server.


@pytest.fixture(scope="session")
def proxies() -> Iterator[dict]:
    started: dict[str, str] = {}
    procs = []
    yield started, procs
    for proc in procs:
        stop(proc, timeout=5)


@pytest.fixture
def proxy_url(server, proxies) -> str:
    started, procs = proxies
    if server.url not in started:
        port = free_port()
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
            "ARBE_TEST_DS_URL": server.url,
            "ARBE_TEST_DS_SECRET": server.secret or "",
        }
        daphne = Path(sys.executable).with_name("daphne")
        proc = subprocess.Popen(
            [str(daphne), "-b", "127.0.0.1", "-p", str(port), "--access-log", "/dev/null",
             "tests.integration.streams_client.proxy_app:app"],
            cwd=ROOT, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        procs.append(proc)
        wait_for_port(port, proc=proc)
        started[server.url] = f"http://127.0.0.1:{port}"
    return started[server.url]
