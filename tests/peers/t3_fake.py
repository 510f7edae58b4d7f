"""The fake T3 Code server (``t3_server.mjs``, on the real Effect RPC server) as a test peer.

``FakeT3`` runs it on a free loopback port with a script (see the ``.mjs`` header),
stops it by PID and can restart it on the same port with a new script, which is
how the board service's reconnection is tested.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.peers.ports import free_port, stop, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("t3_server.mjs")
TOKEN = "fake-t3-token"


class FakeT3:
    def __init__(self, workdir: str) -> None:
        self.workdir = Path(workdir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = TOKEN
        self.proc: subprocess.Popen | None = None

    def start(self, script: dict) -> FakeT3:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is not installed (Node 20 runs the fake T3 server)")
        if not (ROOT / "node_modules" / "@effect" / "platform-node").is_dir():
            raise RuntimeError("effect is missing: run `npm install --no-audit --no-fund`")
        path = self.workdir / "script.json"
        path.write_text(json.dumps({"token": self.token, **script}))
        self.proc = subprocess.Popen(
            [node, str(SCRIPT), str(self.port), str(path)],
            cwd=ROOT,
            env={**os.environ, "NODE_NO_WARNINGS": "1"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_for_port(self.port, proc=self.proc)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)
            self.proc = None

    def restart(self, script: dict) -> None:
        self.stop()
        self.start(script)

    def push(self, chunk: list, *, archived: bool = False) -> int:
        """One more chunk for every live shell (or archived shell) subscription; how many
        there were."""
        body = {"chunk": chunk, "archived": archived}
        response = httpx.post(f"{self.url}/_fake/push", json=body, timeout=5)
        response.raise_for_status()
        return response.json()["subscribers"]


@contextlib.contextmanager
def fake_t3(script: dict) -> Iterator[FakeT3]:
    with tempfile.TemporaryDirectory(prefix="arbe-t3-") as workdir:
        server = FakeT3(workdir)
        try:
            yield server.start(script)
        finally:
            server.stop()


@pytest.fixture
def t3_server():
    """A factory: ``t3_server(script)`` starts a fake T3 server, stopped after the test."""
    with contextlib.ExitStack() as stack:
        yield lambda script=None: stack.enter_context(fake_t3(script or {}))
