"""A loopback stand-in for a browser's push service (FCM, Mozilla autopush…).

It takes the encrypted POSTs ``pywebpush`` sends to a subscription's endpoint and records
them (path, headers, body) without decrypting: ``Subscriber`` holds the keys a browser would
and decrypts a recorded body the way the browser's push stack does (RFC 8291, aes128gcm).
A path under ``/gone/`` answers 410, as a service does for an unsubscribed browser; one
under ``/moved/`` answers 307 to the same name under ``/elsewhere/`` (a service that redirects,
which the server must not follow).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class Subscriber:
    """A browser's side of one subscription: its ECDH key pair and auth secret."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.private = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)

    def subscription(self) -> dict:
        public = self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"endpoint": self.endpoint, "keys": {"p256dh": b64(public), "auth": b64(self.auth)}}

    def decrypt(self, body: bytes) -> dict:
        plain = http_ece.decrypt(
            body, private_key=self.private, auth_secret=self.auth, version="aes128gcm"
        )
        return json.loads(plain)


class PushService:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def subscriber(self, name: str, *, gone: bool = False, moved: bool = False) -> Subscriber:
        prefix = "gone" if gone else "moved" if moved else "push"
        return Subscriber(f"{self.url}/{prefix}/{name}")

    def to(self, subscriber: Subscriber) -> list[Received]:
        path = subscriber.endpoint.removeprefix(self.url)
        with self._lock:
            return [r for r in self.received if r.path == path]

    def take(self, received: Received) -> int:
        with self._lock:
            self.received.append(received)
        if received.path.startswith("/moved/"):
            return 307
        return 410 if received.path.startswith("/gone/") else 201

    def start(self) -> PushService:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def _handler_for(service: PushService):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            status = service.take(
                Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            self.send_response(status)
            if status == 307:
                self.send_header("Location", self.path.replace("/moved/", "/elsewhere/", 1))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    return Handler


@pytest.fixture
def push_service(settings) -> Iterator[PushService]:
    """A running push service on loopback, and settings that let the server POST to it."""
    settings.PUSH_SERVICE_HOSTS = ["127.0.0.1"]
    settings.PUSH_ALLOW_HTTP = True
    service = PushService().start()
    with contextlib.ExitStack() as stack:
        stack.callback(service.stop)
        yield service
