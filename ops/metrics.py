"""Prometheus metrics, one endpoint per process (docs/operations.md, "Metrics").

Every web process answers ``/metrics`` on its own port and every worker on its health port
(``manage.py backstage --health-port``), each with its own registry: Prometheus scrapes
each process as a target and sums across them. Not the client's multiprocess mode: that
is for several processes behind one port (gunicorn's workers), needs a shared directory
wiped at each deploy, and loses live gauges (open sockets, tails) of processes that died.

Other apps record through the one-line helpers below, never by building metrics of their
own, so names and labels stay in one place. Labels are bounded: route names (never raw
paths), status codes, entry types, outcomes.
"""

from __future__ import annotations

import time
import weakref

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    exposition,
    generate_latest,
)

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = exposition.CONTENT_TYPE_LATEST

# Seconds: from a fast page to a long-poll that held 30 s.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
REPLY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)

REQUESTS = Counter(
    "arbe_http_requests_total",
    "HTTP requests answered, by route name and status code.",
    ["route", "method", "status"],
    registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "arbe_http_request_duration_seconds",
    "Time from a request's start to its last body byte, by route name.",
    ["route"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
SOCKETS = Gauge(
    "arbe_websockets_open", "WebSockets accepted and still open.", ["route"], registry=REGISTRY
)
TAILS = Gauge(
    "arbe_upstream_tails",
    "Upstream tails this process holds on the stream server (one per watched thread).",
    registry=REGISTRY,
)
FANOUT_SECONDS = Histogram(
    "arbe_fanout_duration_seconds",
    "From a tail's read returning entries to every socket of the thread being handed them.",
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
ENTRIES = Counter(
    "arbe_entries_appended_total",
    "Entries this process appended to thread streams, by entry type.",
    ["type"],
    registry=REGISTRY,
)
POSTS = Counter(
    "arbe_posts_appended_total",
    "Chat messages this process appended (people's posts and bots' answers).",
    registry=REGISTRY,
)
REPLIES = Counter(
    "arbe_replies_total",
    "Bot replies by outcome: started, finished, failed (a final failure only).",
    ["outcome"],
    registry=REGISTRY,
)
REPLY_ASKED_SECONDS = Histogram(
    "arbe_reply_model_asked_seconds",
    "From the newest message a reply answers being posted to the model being asked.",
    buckets=REPLY_BUCKETS,
    registry=REGISTRY,
)
REPLY_VISIBLE_SECONDS = Histogram(
    "arbe_reply_visible_seconds",
    "From the model's last word to the bot's answer being in the thread's log.",
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
PI_STARTS = Counter(
    "arbe_pi_starts_total",
    "Replies' Pi processes, by kind: cold (a new process), warm (one kept since a reply).",
    ["kind"],
    registry=REGISTRY,
)
PI_RUNNING = Gauge(
    "arbe_pi_processes",
    "Pi processes running in this process, by kind: cold (at work), warm (idle, kept).",
    ["kind"],
    registry=REGISTRY,
)  # fmt: skip
FANOUT_FRAMES = Counter(
    "arbe_fanout_frames_total",
    "Live frames handed to thread sockets, by path: direct (the hub wrote the built frame to "
    "the socket) or queued (the viewer's queue and the framework).",
    ["path"],
    registry=REGISTRY,
)
TAKEOVERS = Counter(
    "arbe_lease_takeovers_total",
    "Threads taken over from a worker that stopped renewing its lease.",
    registry=REGISTRY,
)
SWEEP_REPAIRS = Counter(
    "arbe_sweep_repairs_total",
    "What the status sweep repaired, by kind: threads recomputed, runs orphaned.",
    ["kind"],
    registry=REGISTRY,
)
NOTIFICATIONS = Counter(
    "arbe_notifications_total",
    "Notifications by channel (push, email) and outcome (sent, failed).",
    ["channel", "outcome"],
    registry=REGISTRY,
)
SEARCH_LAG_SECONDS = Histogram(
    "arbe_search_index_lag_seconds",
    "From a chat entry's timestamp to its words being in the search index.",
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
for _kind in ("cold", "warm"):  # both series exist from the start, at 0
    PI_STARTS.labels(_kind)
    PI_RUNNING.labels(_kind)
for _path in ("direct", "queued"):
    FANOUT_FRAMES.labels(_path)
for _kind in ("recomputed", "orphaned"):
    SWEEP_REPAIRS.labels(_kind)
for _outcome in ("started", "finished", "failed"):
    REPLIES.labels(_outcome)
for _channel in ("push", "email"):
    for _outcome in ("sent", "failed"):
        NOTIFICATIONS.labels(_channel, _outcome)


def exposition_text() -> bytes:
    return generate_latest(REGISTRY)


# -- one-line hooks ------------------------------------------------------------------------


def appended(entries) -> None:
    for entry in entries:
        kind = entry.type
        ENTRIES.labels(kind).inc()
        if kind == "chat":
            POSTS.inc()
        elif kind == "signal.dispatch.started":
            REPLIES.labels("started").inc()
        elif kind == "signal.dispatch.finished":
            REPLIES.labels("finished").inc()
        elif kind == "signal.dispatch.failed" and getattr(entry.payload, "final", True):
            REPLIES.labels("failed").inc()
        elif kind == "signal.thread.taken_over":
            TAKEOVERS.inc()


def indexed(entries) -> None:
    """After the search index took ``entries`` in: how far behind their timestamps."""
    now_ms = time.time() * 1000
    for entry in entries:
        if entry.type == "chat":
            SEARCH_LAG_SECONDS.observe(max(0.0, now_ms - entry.ts) / 1000)


def model_asked(since_ms: int) -> None:
    if since_ms:
        REPLY_ASKED_SECONDS.observe(max(0.0, time.time() * 1000 - since_ms) / 1000)


_pi_live: weakref.WeakSet = weakref.WeakSet()
_warm_pools: weakref.WeakSet = weakref.WeakSet()  # dispatch.warm.WarmPool, one per engine


def _running() -> tuple[int, int]:
    """(at work, kept warm) among the Pi processes still running. A kept one that died
    while idle (killed, out of memory) is neither until its pool notices and closes it."""
    kept = {id(w.session) for pool in list(_warm_pools) for w in list(pool.kept.values())}
    live = [s for s in list(_pi_live) if s.returncode is None]
    warm = sum(1 for s in live if id(s) in kept)
    return len(live) - warm, warm


PI_RUNNING.labels("cold").set_function(lambda: _running()[0])
PI_RUNNING.labels("warm").set_function(lambda: _running()[1])


def warm_pool(pool) -> None:
    """An engine's warm processes (``dispatch.warm``), counted as ``kind="warm"``."""
    _warm_pools.add(pool)


def pi_reused() -> None:
    """A reply took a warm Pi instead of starting one."""
    PI_STARTS.labels("warm").inc()


def pi_started(session, kind: str = "cold") -> None:
    """A Pi process started (dispatch.pi.process); it counts as running until it exits."""
    PI_STARTS.labels(kind).inc()
    _pi_live.add(session)


def swept(recomputed: int, orphaned: int) -> None:
    SWEEP_REPAIRS.labels("recomputed").inc(recomputed)
    SWEEP_REPAIRS.labels("orphaned").inc(orphaned)


def notified(channel: str, ok: bool, count: int = 1) -> None:
    NOTIFICATIONS.labels(channel, "sent" if ok else "failed").inc(count)
