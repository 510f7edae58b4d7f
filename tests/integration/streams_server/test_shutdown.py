"""serve_streams stops promptly on SIGTERM and releases waits whose client has gone.

The long-poll timeout is far longer than any bound here, so a wait that is
not ended by shutdown or disconnect fails the test (``proc.wait`` times out).
The waiter count comes from serve_streams' SIGUSR1 report on stdout.
"""

import http.client
import queue
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import pytest

from tests.peers.embedded import ROOT, migrate, server_env
from tests.peers.ports import free_port, stop, wait_for_port

LONG_POLL_MS = 120_000
# Generous: a prompt exit takes well under a second; a hung one takes LONG_POLL_MS.
EXIT_BOUND = 30


class Server:
    def __init__(self, database_url: str, var_dir: str):
        self.port = free_port()
        env = server_env(database_url, var_dir, DURABLE_STREAMS_LONG_POLL_MS=str(LONG_POLL_MS))
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve_streams", "--port", str(self.port)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        wait_for_port(self.port, proc=self.proc)

    def _read_stdout(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)

    def waiters(self) -> int:
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            found = re.match(r"streams waiters: (\d+)", line)
            if found:
                return int(found.group(1))
        raise TimeoutError("no waiter report")

    def wait_for_waiters(self, expected: int) -> None:
        for _ in range(200):  # bounded: 200 × 50 ms
            if self.waiters() == expected:
                return
            time.sleep(0.05)
        raise AssertionError(f"waiter count never reached {expected}")

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=EXIT_BOUND)

    def create_stream(self) -> tuple[str, str]:
        path = f"/v1/stream/shutdown/{uuid.uuid4().hex}"
        conn = self.connection()
        conn.request("PUT", path, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        assert response.status == 201
        offset = response.getheader("Stream-Next-Offset")
        conn.close()
        return path, offset


@pytest.fixture(scope="module")
def database():
    with tempfile.TemporaryDirectory(prefix="arbe-ds-stop-") as tmp:
        url = f"sqlite:///{tmp}/stop.sqlite3"
        migrate(url, tmp)
        yield url, tmp


@pytest.fixture
def server(database):
    server = Server(*database)
    yield server
    stop(server.proc)  # only does anything when a test failed before the server exited


def test_sigterm_answers_a_waiting_long_poll_and_exits(server):
    path, offset = server.create_stream()
    conn = server.connection()
    conn.request("GET", f"{path}?offset={offset}&live=long-poll")
    server.wait_for_waiters(1)
    server.proc.send_signal(signal.SIGTERM)
    response = conn.getresponse()
    assert response.status == 204
    assert response.getheader("Stream-Up-To-Date") == "true"
    server.proc.wait(timeout=EXIT_BOUND)


def test_disconnected_long_poll_releases_its_waiter_and_sigterm_exits(server):
    path, offset = server.create_stream()
    sock = socket.create_connection(("127.0.0.1", server.port))
    request = f"GET {path}?offset={offset}&live=long-poll HTTP/1.1\r\nHost: test\r\n\r\n"
    sock.sendall(request.encode())
    server.wait_for_waiters(1)
    sock.close()
    server.wait_for_waiters(0)
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=EXIT_BOUND)


def test_sigterm_ends_an_sse_stream_and_exits(server):
    path, offset = server.create_stream()
    conn = server.connection()
    conn.request("GET", f"{path}?offset={offset}&live=sse")
    response = conn.getresponse()
    assert response.status == 200
    server.wait_for_waiters(1)
    server.proc.send_signal(signal.SIGTERM)
    body = response.read()  # returns once the server ends the stream
    assert b"event: control" in body
    server.proc.wait(timeout=EXIT_BOUND)
