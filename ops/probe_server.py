"""The worker's health port (``manage.py backstage --health-port N``): ``/healthz``,
``/readyz`` and ``/metrics`` over a minimal HTTP/1.1 server on the worker's own loop.

A worker serves no HTTP otherwise, and these three need only a request line and one
header: asyncio's streams suffice, bounded (8 KiB of head, 5 s to send it), one answer
per connection."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ops import endpoints

HEAD_LIMIT = 8192
READ_TIMEOUT_S = 5.0
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           503: "Service Unavailable"}  # fmt: skip

logger = logging.getLogger(__name__)


async def serve(host: str, port: int, role: str = "worker") -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            found = await _answer(reader, role)
            head = (
                f"HTTP/1.1 {found.status} {REASONS.get(found.status, 'OK')}\r\n"
                f"Content-Type: {found.content_type}\r\n"
                f"Content-Length: {len(found.body)}\r\n"
                "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode("latin-1") + found.body)
            await writer.drain()
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError):
            pass
        except Exception:
            logger.exception("health port: answering failed")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    return await asyncio.start_server(handle, host, port, limit=HEAD_LIMIT)


async def _answer(reader: asyncio.StreamReader, role: str) -> endpoints.Answer:
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
    except (asyncio.LimitOverrunError, ValueError):
        return endpoints.Answer(400, endpoints.JSON, b'{"status":"bad request"}\n')
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return endpoints.Answer(400, endpoints.JSON, b'{"status":"bad request"}\n')
    method, target, _ = parts
    if method not in ("GET", "HEAD"):
        return endpoints.Answer(405, endpoints.JSON, b'{"status":"method not allowed"}\n')
    authorization = ""
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "authorization":
            authorization = value.strip()
    return await endpoints.answer(target.split("?", 1)[0], authorization, role)
