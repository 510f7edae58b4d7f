"""The web process's outermost ASGI layer: probes, request ids, metrics, access lines.

``observed_http`` answers ``/healthz``, ``/readyz`` and ``/metrics`` itself; for every
other request it takes a sane ``X-Request-ID`` or makes one, answers it in the response's
header, counts the request by route name and status, times it, and (``LOG_FORMAT=json``)
writes one access line with the route name, never the raw path (a path can hold an invite
token). ``observed_websocket`` keeps the open-sockets gauge.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings

from ops import context, endpoints, metrics

access = logging.getLogger("arbe.access")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _header(scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return ""


def _fallback_route(path: str) -> str:
    if path.startswith("/v1/stream/"):
        return "streams"
    if path.startswith("/static/"):
        return "static"
    return "unmatched"


def observed_http(app):
    json_lines = settings.LOG_FORMAT == "json"

    async def observed(scope, receive, send):
        path = scope.get("path", "")
        if path in endpoints.PATHS:
            found = await endpoints.answer(path, _header(scope, b"authorization"), "web")
            return await _send_answer(send, found)
        rid = context.new_request_id(_header(scope, b"x-request-id"))
        fields = context.begin(rid)
        started = time.monotonic()
        status = 0

        async def send_with_id(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [h for h in message.get("headers", ()) if h[0].lower() != b"x-request-id"]
                message = {**message, "headers": [*headers, (b"x-request-id", rid.encode())]}
            await send(message)

        try:
            await app(scope, receive, send_with_id)
        finally:
            elapsed = time.monotonic() - started
            route = fields.route or _fallback_route(path)
            method = scope.get("method", "")
            method = method if method in METHODS else "other"  # a label a client can't grow
            metrics.REQUESTS.labels(route, method, str(status or 0)).inc()
            metrics.REQUEST_SECONDS.labels(route).observe(elapsed)
            if json_lines:
                access.info(
                    "%s %s %s",
                    method,
                    route,
                    status,
                    extra={"route": route, "method": method, "status": status,
                           "ms": round(elapsed * 1000, 1)},
                )  # fmt: skip

    return observed


def observed_websocket(app):
    async def observed(scope, receive, send):
        context.begin(context.new_request_id(_header(scope, b"x-request-id")))
        path = scope.get("path", "")
        route = "/".join(path.split("/")[:3]) + "/" if path.count("/") > 2 else path
        accepted = False

        async def counting_send(message):
            nonlocal accepted
            if message["type"] == "websocket.accept" and not accepted:
                accepted = True
                metrics.SOCKETS.labels(route).inc()
            await send(message)

        counting_send.inner = send  # what it wraps (threads.socket_frames finds the socket)
        try:
            await app(scope, receive, counting_send)
        finally:
            if accepted:
                metrics.SOCKETS.labels(route).dec()

    return observed


async def _send_answer(send, found: endpoints.Answer) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": found.status,
            "headers": [
                (b"content-type", found.content_type.encode()),
                (b"cache-control", b"no-store"),
                (b"content-length", str(len(found.body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": found.body})
