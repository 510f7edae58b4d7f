"""Supervision: a run nobody works on is orphaned, never left working.

A run lives by its worker, not by what it writes. The engine that runs it holds its child
thread's lease and renews it every third of a lease (``Backstage.tend_once``) for as long
as the run's task runs: Pi thinking, or one tool call open for an hour. Such a run is never
judged by its silence here. A run whose holder stopped renewing (a killed or frozen worker)
is the takeover's: the next engine's tick fences it off and orphans it
(``dispatch.takeover``). What is left is a run no worker ever held, its start lost on its
way: silent past ``RUN_SILENCE_S``, it is orphaned here, at a lease epoch of its own (the
sweep takes the child thread's lease first), so a writer behind it is fenced off and a
start that arrives later finds it dead.
"""

from __future__ import annotations

import os
import socket
import time

from django.conf import settings

from dispatch import thread_leases
from dispatch.runs import orphan, silent_reason
from threads.current import load_view
from threads.models import Thread

LIVE = ("claimed", "running")
SWEEP_HOLDER = f"sweep:{socket.gethostname()}:{os.getpid()}"


def silence_ms() -> int:
    return settings.RUN_SILENCE_S * 1000


def orphan_silent_runs(*, at_ms: int | None = None) -> int:
    """Orphan every run no live worker holds that was silent past ``RUN_SILENCE_S``;
    returns how many."""
    at_ms = at_ms if at_ms is not None else time.time_ns() // 1_000_000
    count = 0
    runs = Thread.objects.filter(parent__isnull=False, archived_at__isnull=True).exclude(
        run_offset=""
    )
    for thread in runs.exclude(status__in=["done", "idle"]).iterator():
        now = load_view(thread, now_ms=at_ms).now
        silent = [
            run
            for run in now.runs
            if run.childThreadId is None and run.state in LIVE and at_ms - run.lastTs > silence_ms()
        ]
        # Held: its worker's heartbeat says it works. Lapsed: the takeover's to settle.
        if silent and not thread_leases.known(thread.pk):
            count += _orphan_unheld(thread, silent)
    return count


def _orphan_unheld(thread: Thread, silent) -> int:
    taken = thread_leases.acquire(thread.pk, SWEEP_HOLDER, thread_leases_s())
    if taken is None:
        return 0  # a worker took it meanwhile: the run lives
    if taken is thread_leases.Taken.TAKEN_OVER:  # a holder came and went meanwhile
        thread_leases.hand_over(thread.pk, SWEEP_HOLDER)  # the takeover settles it
        return 0
    count = 0
    try:
        epoch = thread_leases.epoch(thread.pk, SWEEP_HOLDER)
        for run in silent:
            reason = silent_reason(settings.RUN_SILENCE_S)
            if epoch is not None and orphan(thread, run.runId, run.agentId, reason, epoch):
                count += 1
    finally:
        thread_leases.drop(thread.pk, SWEEP_HOLDER)
    return count


def thread_leases_s() -> float:
    return settings.BACKSTAGE_LEASE_S
