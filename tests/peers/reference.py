"""The reference Node Durable Streams server (``@durable-streams/server``) as a test peer.

``reference_server()`` is a plain context manager (benchmarks and ``tests.peers.stack``
use it); the fixtures below start one per test session, file-backed in a temp dir.
"""

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.peers.ports import free_port, stop, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("reference_server.mjs")


@contextlib.contextmanager
def reference_server(
    *, long_poll_ms: int | None = None, data_dir: str | None = None, file_backed: bool = True
) -> Iterator[str]:
    """Run the reference server on a free loopback port; yield its base URL.

    File-backed (segment files + LMDB) in ``data_dir``, or in a temp dir when
    none is given; ``file_backed=False`` keeps streams in memory. The server's
    long-poll timeout is ``long_poll_ms`` (its default is 30 s).
    """
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not installed (Node 20 runs the reference server)")
    if not (ROOT / "node_modules" / "@durable-streams" / "server").is_dir():
        raise RuntimeError("@durable-streams/server is missing: run `npm ci` (make deps)")
    with contextlib.ExitStack() as stack:
        if file_backed and data_dir is None:
            data_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="arbe-dsref-"))
        port = free_port()
        env = {**os.environ}
        if long_poll_ms:
            env["LONG_POLL_MS"] = str(long_poll_ms)
        args = [node, str(SCRIPT), str(port)] + ([data_dir] if file_backed else [])
        proc = subprocess.Popen(
            args,
            cwd=ROOT,  # node resolves @durable-streams/server from the repo's node_modules
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        stack.callback(stop, proc)
        wait_for_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="session")
def reference_ds_url() -> Iterator[str]:
    """A file-backed reference server with the default 30 s long-poll timeout."""
    with reference_server() as url:
        yield url


@pytest.fixture(scope="session")
def reference_ds_short_poll_url() -> Iterator[str]:
    """A reference server whose long-polls time out after 500 ms (for 204 answers)."""
    with reference_server(long_poll_ms=500) as url:
        yield url
