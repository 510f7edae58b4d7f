"""Keeping ``Thread.status`` a cache of the fold, guarded by ``status_rev``.

Called after appends that can move the record (the recency wrapper and the
sandbox proxy both call ``track_after_append``), by ``/now`` when it sees
drift, by the 60 s sweep and by ``backfill_thread_status``. Each pass reads the
row (and its ``status_rev``) before the stream, folds, and writes only if the
record changed and the rev is still the one it read — else it reads again.
After a write it checks that the stream hadn't moved past what it folded, so
a slow writer can't leave a stale record behind a faster one that saw no change.
"""

from __future__ import annotations

import logging
import time

from django.db.models import F, Q

from arbe_lib.events import send_to_group
from threads.current import load_view
from threads.log import log_reader
from threads.models import Thread
from threads.status import DECIDING, ThreadStatus, derive_thread_status, moves_status

logger = logging.getLogger(__name__)
MAX_PASSES = 5


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def agent_name(agent_id: str) -> str:
    """A bot's name for its thread's status message (read only while a reply runs)."""
    from houses.models import Agent

    name = Agent.objects.filter(pk=agent_id).values_list("display_name", flat=True).first()
    return name or "A bot"


def track_after_append(thread_id: str, entries) -> None:
    if moves_status(entries):
        sync_status(thread_id)


def sync_status(thread_id: str, *, at_ms: int | None = None) -> ThreadStatus | None:
    """Recompute and store the thread's record; returns the status, or None if no thread."""
    status = None
    for _ in range(MAX_PASSES):
        thread = Thread.objects.filter(pk=thread_id).first()
        if thread is None:
            return None
        loaded = load_view(thread, now_ms=at_ms if at_ms is not None else now_ms())
        status = derive_thread_status(loaded.now, thread_id=thread_id, name_of=agent_name)
        if (thread.status, thread.status_message) == (status.state, status.message[:300]):
            return status
        if not write_status(thread, status):
            continue  # someone wrote since we read the row: fold again
        if _tail_offset(thread) == loaded.offset:
            return status
    logger.warning("status of thread %s still moving after %d passes", thread_id, MAX_PASSES)
    return status


def repair_drift(thread: Thread, status: ThreadStatus) -> None:
    """``/now`` found the stored record disagreeing with the fold: write it back, guarded."""
    if (thread.status, thread.status_message) != (status.state, status.message[:300]):
        write_status(thread, status)


def write_status(thread: Thread, status: ThreadStatus) -> bool:
    """The guarded write: lands only if ``status_rev`` is still what ``thread`` was read with."""
    updated = Thread.objects.filter(pk=thread.pk, status_rev=thread.status_rev).update(
        status=status.state, status_message=status.message[:300], status_rev=F("status_rev") + 1
    )
    if updated:
        announce(thread, status)
    return bool(updated)


def _tail_offset(thread: Thread) -> str:
    return log_reader().head(thread.stream_name).next_offset


def announce(thread: Thread, status: ThreadStatus) -> None:
    """Tell the house's live pages; the stored row stays the truth if this is lost."""
    from houses.access import audience

    event = {"type": "thread.status", "thread": thread.pk, "status": status.state}
    if thread.is_private:  # only its members' pages hear of a private thread
        event["readers"] = audience(thread.pk)
    send_to_group(f"house-{thread.house_id}", event)


def owed_a_pass() -> Q:
    """Rows stored as working, or idle with a message still waiting for the director."""
    deciding = Q(status="idle", status_message__startswith=DECIDING)
    return Q(archived_at__isnull=True) & (Q(status="working") | deciding)


def working_threads() -> list[str]:
    """Live threads working or waiting for the director: the sweep wakes the director for each."""
    return list(Thread.objects.filter(owed_a_pass()).values_list("pk", flat=True))


def sweep(*, at_ms: int | None = None) -> int:
    """Recompute every live thread stored as working, deciding or blocked (the 60 s sweep).

    Those are the records that can go stale on their own: working needs live evidence,
    and the evidence ages without any new entry to trigger tracking.
    """
    blocked = Q(archived_at__isnull=True, status="blocked")
    ids = Thread.objects.filter(owed_a_pass() | blocked).values_list("pk", flat=True)
    count = 0
    for thread_id in ids.iterator():
        sync_status(thread_id, at_ms=at_ms)
        count += 1
    return count
