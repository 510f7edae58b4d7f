"""A loopback stand-in for PostHog's capture endpoint: records what the SDK really sends.

It answers ``POST /batch/`` (and the AI lane, ``/i/v0/ai/batch/``) with 200, gunzips bodies
sent with ``Content-Encoding: gzip``, and keeps both the raw bytes as they arrived and as
decoded, and the events of every batch, deduplicated by ``uuid``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

KEY = "phc_capture_test_key"


class CaptureServer:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []  # as received (possibly gzipped)
        self.decoded: list[bytes] = []  # after gunzip
        self.paths: list[str] = []
        self._events: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def events(self) -> list[dict]:
        with self._lock:
            return list(self._events.values())

    def of(self, name: str) -> list[dict]:
        return [e for e in self.events if e["event"] == name]

    def take(self, path: str, raw: bytes, encoding: str) -> None:
        body = gzip.decompress(raw) if encoding == "gzip" else raw
        data = json.loads(body)
        with self._lock:
            self.paths.append(path)
            self.bodies.append(raw)
            self.decoded.append(body)
            for event in data.get("batch", []):
                self._events.setdefault(event["uuid"], event)

    def start(self) -> CaptureServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def _handler_for(capture: CaptureServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 - quiet test output
            pass

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            path = self.path.split("?")[0]
            if path in ("/batch/", "/i/v0/ai/batch/"):
                capture.take(path, raw, self.headers.get("Content-Encoding", ""))
                status, body = 200, b'{"status":1}'
            else:
                status, body = 404, b"{}"
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextlib.contextmanager
def capture_server() -> Iterator[CaptureServer]:
    server = CaptureServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def posthog(settings) -> Iterator[CaptureServer]:
    """The trace mirror on, pointed at a capture server; call ``flushed()`` before asserting."""
    with capture_server() as server:
        settings.POSTHOG_API_KEY = KEY
        settings.POSTHOG_HOST = server.url
        yield server
        from dispatch.traces import client

        client.flush()
