"""The embedded Durable Streams server as a subprocess, for tests.

``embedded_ds_url`` (session): ``manage.py serve_streams`` on a free loopback
port against its own freshly migrated database — a temp SQLite file, or a
fresh database on the PostgreSQL server named by ``DATABASE_URL`` when that
is PostgreSQL. Stopped by PID at the end of the session.
"""

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.peers import postgres
from tests.peers.ports import free_port, stop, wait_for_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class StreamsServer:
    url: str
    database_url: str
    pid: int


def server_env(database_url: str, var_dir: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DURABLE_STREAMS_SECRET"}
    env.update(DATABASE_URL=database_url, ARBE_VAR_DIR=var_dir, **extra)
    return env


def migrate(database_url: str, var_dir: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT, env=server_env(database_url, var_dir), check=True,
    )  # fmt: skip


@contextlib.contextmanager
def serve_streams(
    database_url: str, var_dir: str, *, secret: str | None = None, long_poll_ms: int = 1000
) -> Iterator[StreamsServer]:
    """Run ``manage.py serve_streams`` (already migrated DB) until the block ends."""
    port = free_port()
    extra = {"DURABLE_STREAMS_LONG_POLL_MS": str(long_poll_ms)}
    if secret:
        extra["DURABLE_STREAMS_SECRET"] = secret
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve_streams", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT, env=server_env(database_url, var_dir, **extra), start_new_session=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for_port(port, proc=proc)
        yield StreamsServer(f"http://127.0.0.1:{port}", database_url, proc.pid)
    finally:
        stop(proc)


@contextlib.contextmanager
def fresh_database(tmp: str) -> Iterator[str]:
    """A migrated database: on ``DATABASE_URL``'s PostgreSQL server, else a SQLite file."""
    configured = os.environ.get("DATABASE_URL", "")
    if configured.startswith(("postgres://", "postgresql://")):
        url = postgres.create_database(configured)
        try:
            migrate(url, tmp)
            yield url
        finally:
            postgres.drop_database(url)
        return
    url = f"sqlite:///{tmp}/streams.sqlite3"
    migrate(url, tmp)
    yield url


@pytest.fixture(scope="session")
def embedded_ds() -> Iterator[StreamsServer]:
    with (
        tempfile.TemporaryDirectory(prefix="arbe-ds-") as tmp,
        fresh_database(tmp) as url,
        serve_streams(url, tmp) as server,
    ):
        yield server


@pytest.fixture(scope="session")
def embedded_ds_url(embedded_ds: StreamsServer) -> str:
    return embedded_ds.url


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A PostgreSQL server URL: ``DATABASE_URL``'s, else a throw-away cluster."""
    configured = os.environ.get("DATABASE_URL", "")
    if configured.startswith(("postgres://", "postgresql://")):
        yield configured
        return
    if not postgres.available():
        pytest.skip("PostgreSQL binaries not installed")
    with postgres.PostgresCluster() as cluster:
        yield cluster.url("postgres")
