"""``/healthz``, ``/readyz`` and ``/metrics`` as plain functions of (path, headers), shared
by the web processes' ASGI wrapper (``ops.asgi``) and the workers' health port
(``ops.probe_server``). They run before Django's stack: no session, no CSRF, no host
check (an orchestrator probes by IP address), no sign-in.

``/metrics`` answers only a request bearing ``METRICS_TOKEN`` (compared in constant time);
unset, it is 404 like any unknown path, so nothing is exposed by default."""

from __future__ import annotations

import hmac

from django.conf import settings

from ops import health, metrics

PATHS = ("/healthz", "/readyz", "/metrics")
JSON = "application/json"


class Answer:
    __slots__ = ("status", "content_type", "body")

    def __init__(self, status: int, content_type: str, body: bytes) -> None:
        self.status, self.content_type, self.body = status, content_type, body


def metrics_allowed(authorization: str) -> bool:
    token = getattr(settings, "METRICS_TOKEN", "")
    if not token:
        return False
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


async def answer(path: str, authorization: str, role: str) -> Answer:
    if path == "/healthz":
        status, body = health.liveness(role)
        return Answer(status, JSON, health.encode(body))
    if path == "/readyz":
        status, body = await health.readiness(role)
        return Answer(status, JSON, health.encode(body))
    if path == "/metrics" and metrics_allowed(authorization):
        return Answer(200, metrics.CONTENT_TYPE, metrics.exposition_text())
    return Answer(404, JSON, health.encode({"status": "not found"}))
