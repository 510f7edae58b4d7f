"""A lean WebSocket client for ``bench.fanout``: a thousand sockets in one asyncio process.

The fan-out benchmark times a post's fragment on every socket, with the client on the same
two cores as the server. Through the ``websockets`` library a frame costs its client tens
of microseconds of Python (its protocol object, its queues, a task wake-up per message), so
at a thousand sockets the client, not the server, set the median. This client speaks just
what the benchmark needs (RFC 6455): the upgrade, unmasked unfragmented server frames read
straight off ``data_received`` with their arrival time, pongs for Daphne's pings, and a
close. The same role ``bench.streams.Conn`` plays for HTTP.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from collections.abc import Callable

OnText = Callable[[bytes, float], None]


class LeanSocket(asyncio.Protocol):
    def __init__(self, on_text: OnText) -> None:
        loop = asyncio.get_running_loop()
        self.on_text = on_text
        self.buffer = bytearray()
        self.upgraded: asyncio.Future = loop.create_future()
        self.first: asyncio.Future = loop.create_future()  # the first text frame
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def connection_lost(self, exc) -> None:
        for future in (self.upgraded, self.first):
            if not future.done():
                future.set_exception(ConnectionError("closed before its first frame"))

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        buffer = self.buffer
        buffer += data
        if not self.upgraded.done():
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(buffer[:end])
            del buffer[: end + 4]
            if not head.startswith(b"HTTP/1.1 101"):
                self.upgraded.set_exception(ConnectionError(head.split(b"\r\n")[0].decode()))
                self.transport.close()
                return
            self.upgraded.set_result(None)
        while len(buffer) >= 2:
            size, start = buffer[1] & 0x7F, 2
            if size == 126:
                if len(buffer) < 4:
                    return
                size, start = int.from_bytes(buffer[2:4], "big"), 4
            elif size == 127:
                if len(buffer) < 10:
                    return
                size, start = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < start + size:
                return
            opcode = buffer[0] & 0x0F
            payload = bytes(buffer[start : start + size])
            del buffer[: start + size]
            if opcode == 0x1:
                if not self.first.done():
                    self.first.set_result(payload)
                self.on_text(payload, now)
            elif opcode == 0x9:  # ping: a pong with its payload (masked with a zero key)
                self.transport.write(bytes((0x8A, 0x80 | len(payload))) + b"\0\0\0\0" + payload)
            elif opcode == 0x8:
                self.transport.close()
                return

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"\x88\x82\0\0\0\0\x03\xe8")  # close 1000, masked (zero key)
            self.transport.close()


async def connect(port: int, path: str, headers: dict[str, str], on_text: OnText) -> LeanSocket:
    """Open, upgrade, and wait for the first text frame (the page's panel and offset)."""
    loop = asyncio.get_running_loop()
    _, socket = await loop.create_connection(lambda: LeanSocket(on_text), "127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        f"GET {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    socket.transport.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    try:
        await asyncio.wait_for(socket.upgraded, 10)
        await asyncio.wait_for(socket.first, 10)
    except BaseException:
        socket.transport.close()
        raise
    return socket
