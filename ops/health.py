"""Liveness and readiness: what a load balancer, an orchestrator or ``make scale`` asks.

``/healthz`` says the process answers, and nothing else: it touches no dependency, so a
database outage never gets every process restarted at once. ``/readyz`` checks each
dependency this process needs, each in a worker thread of a small pool of its own (never
on the event loop) with a short timeout, all at once:

- ``database``: ``SELECT 1`` on a fresh connection;
- ``channel_layer``: Redis answers PING (the in-memory layer of one process always does);
- ``streams``: the stream server answers HTTP below 500 (``DURABLE_STREAMS_URL``), or the
  embedded server's tables can be read (it lives in the database);
- ``leases`` (workers only): the thread lease table can be read.

The answer names each check and the failing ones, with an error class and nothing more:
no URL, host, secret or message of the driver (which may hold a DSN), nothing about houses.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings

TIMEOUT_S = 2.0
# A hung dependency holds a thread until its own timeout: a small pool bounds how many,
# and a probe that waits for a free thread times out like one that waited for the server.
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="arbe-readyz")


def check_database() -> None:
    from django.db import connections

    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        connection.close()  # this pool thread keeps no connection between probes


def check_channel_layer() -> None:
    if not settings.REDIS_URL:
        return  # in-memory: the layer is this process
    import redis

    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=TIMEOUT_S, socket_timeout=TIMEOUT_S
    )
    try:
        client.ping()
    finally:
        client.close()


def check_streams() -> None:
    if not settings.DURABLE_STREAMS_URL:
        from django.db import connections

        from streams.models import Stream

        try:
            Stream.objects.exists()
        finally:
            connections["default"].close()
        return
    import httpx

    from streams.wire import STREAM_PREFIX

    base = settings.DURABLE_STREAMS_URL.removesuffix(STREAM_PREFIX.rstrip("/"))
    # A stream nobody makes: 404 (or 401) is an answer; a refused connection or 5xx isn't.
    response = httpx.head(f"{base}{STREAM_PREFIX}arbe-readyz-probe", timeout=TIMEOUT_S)
    if response.status_code >= 500:
        raise StreamServerError(f"HTTP {response.status_code}")


def check_leases() -> None:
    from django.db import connections

    from dispatch.models import ThreadLease

    try:
        ThreadLease.objects.exists()
    finally:
        connections["default"].close()


class StreamServerError(Exception):
    pass


WEB_CHECKS: dict[str, Callable[[], None]] = {
    "database": check_database,
    "channel_layer": check_channel_layer,
    "streams": check_streams,
}
WORKER_CHECKS: dict[str, Callable[[], None]] = {**WEB_CHECKS, "leases": check_leases}


async def _run(name: str, check: Callable[[], None], timeout: float) -> tuple[str, dict]:
    started = time.monotonic()
    loop = asyncio.get_running_loop()
    try:
        await asyncio.wait_for(loop.run_in_executor(_pool, check), timeout)
    except TimeoutError:
        result = {"ok": False, "error": "timeout"}
    except Exception as exc:  # the class only: a driver's message may hold a DSN
        result = {"ok": False, "error": type(exc).__name__}
    else:
        result = {"ok": True}
    result["ms"] = round((time.monotonic() - started) * 1000, 1)
    return name, result


async def readiness(role: str = "web", timeout: float = TIMEOUT_S) -> tuple[int, dict]:
    """(status code, body) of ``/readyz`` for a ``web`` or ``worker`` process."""
    checks = WORKER_CHECKS if role == "worker" else WEB_CHECKS
    results = dict(await asyncio.gather(*(_run(n, c, timeout) for n, c in checks.items())))
    failing = [name for name, result in results.items() if not result["ok"]]
    body = {
        "status": "unavailable" if failing else "ready",
        "role": role,
        "failing": failing,
        "checks": results,
    }
    return (503 if failing else 200), body


def liveness(role: str = "web") -> tuple[int, dict]:
    return 200, {"status": "ok", "role": role}


def encode(body: dict) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"
