"""Supervision: runs that went silent are orphaned, never left working."""

from __future__ import annotations

import time

from dispatch.runs import orphan
from threads.current import load_view
from threads.models import Thread
from threads.status import RUN_SILENCE_MS

LIVE = ("claimed", "running")


def orphan_silent_runs(*, at_ms: int | None = None) -> int:
    """Mark every run silent for longer than 90 s as orphaned (and dead); returns how many."""
    at_ms = at_ms if at_ms is not None else time.time_ns() // 1_000_000
    count = 0
    runs = Thread.objects.filter(parent__isnull=False, archived_at__isnull=True).exclude(
        run_offset=""
    )
    for thread in runs.exclude(status__in=["done", "idle"]).iterator():
        now = load_view(thread, now_ms=at_ms).now
        for run in now.runs:
            silent = at_ms - run.lastTs > RUN_SILENCE_MS
            if run.childThreadId is None and run.state in LIVE and silent:
                orphan(thread, run.runId, run.agentId)
                count += 1
    return count
