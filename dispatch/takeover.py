"""Taking over a thread whose worker stopped: its work is recorded as ended, then redone.

A thread's lease is held for the whole of its passes, replies and runs, so when an engine
takes over a lapsed lease, a reply or run the log shows as live has nobody behind it any
more. The log says so first (``signal.dispatch.failed {stage: "worker"}`` for a reply,
``signal.thread.orphaned`` and a dead run state for a run); then the new holder runs a
director pass, which sees the reply ended and settles the messages it had taken in.
"""

from __future__ import annotations

import time

from dispatch.runs import orphan
from threads.current import load_view
from threads.entries import DispatchFailed
from threads.lifecycle import new_entry
from threads.models import Thread
from threads.recency import stream_writer

REPLY_STOPPED = "The worker running this reply stopped."
RUN_STOPPED = "The worker running the run stopped."
LIVE_RUN = ("claimed", "running")


def recover(thread_id: str) -> tuple[int, int]:
    """Record the stopped worker's reply as failed and its runs as orphaned; how many."""
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None:
        return 0, 0
    now = load_view(thread, now_ms=time.time_ns() // 1_000_000).now
    replies = runs = 0
    if now.reply is not None:
        failed = DispatchFailed(
            stage="worker", error=REPLY_STOPPED, dispatchId=now.reply.dispatchId, final=True
        )
        stream_writer().append(thread.stream_name, new_entry(failed, author=now.reply.agentId))
        replies = 1
    for run in now.runs:
        # A run on this thread itself (a delegated run's own record is on its child).
        if run.childThreadId is None and run.state in LIVE_RUN:
            orphan(thread, run.runId, run.agentId, reason=RUN_STOPPED)
            runs += 1
    return replies, runs
