"""Taking over a thread whose worker stopped: fence it off, then settle what it left.

A thread's lease is held for the whole of its passes, replies and runs, so when an engine
takes over a lapsed lease, a reply or run the log shows as live has nobody behind it any
more, or only a frozen worker that may thaw. The taker first appends
``signal.thread.taken_over`` at its new lease epoch: from then on the store refuses the old
holder's appends (``dispatch.fencing``), so the log read *after* it holds everything the old
holder will ever have written. Then, for the reply the log shows as running:

- its bot's answer landed before the fence (a chat, or an emoji answer, stored as the
  bot's reaction to what it answered): the reply is settled as done
  (``signal.dispatch.finished``), never answered again;
- interrupted fewer than ``MAX_RESUMES`` times: ``signal.dispatch.failed {stage: "worker",
  final: false}`` ("answering again") and the taker runs the same reply again;
- otherwise ``signal.dispatch.failed {stage: "worker"}`` ends it, and the person is told.

A run is fenced off and recorded ``signal.thread.orphaned`` with a dead run state, and its
parent told once (``dispatch.runs.orphan``); a run that had ended but whose worker stopped
before it told the parent has its report written now.
"""

from __future__ import annotations

import dataclasses

from dispatch.decide import StartReply
from dispatch.fencing import FencedWriter
from dispatch.runs import Claim, orphan, report_to_parent
from threads.current import entries_for_view
from threads.entries import (
    Chat,
    DispatchFailed,
    DispatchFinished,
    DispatchStarted,
    DispatchSteered,
    EntryReaction,
    ThreadTakenOver,
)
from threads.lifecycle import new_entry
from threads.models import Thread
from threads.now import NowFold

REPLY_STOPPED = "The worker running this reply stopped."
REPLY_INTERRUPTED = "The worker running this reply stopped; answering again."
REPLY_GAVE_UP = "The worker running this reply stopped again; ask again to get an answer."
RUN_STOPPED = "The worker running the run stopped."
RUN_UNREPORTED = "The run ended; its worker stopped before it told this thread how."
LIVE_RUN = ("claimed", "running")
ENDED_RUN = ("finished", "failed")
MAX_RESUMES = 2  # an interrupted reply is run again at most this many times


@dataclasses.dataclass
class Resume:
    """A reply to run again under its dispatch id (its ``signal.dispatch.started`` stands)."""

    start: StartReply
    dispatch_id: str


@dataclasses.dataclass
class Recovered:
    replies: int = 0
    runs: int = 0
    resume: Resume | None = None


def recover(thread_id: str, fence: FencedWriter) -> Recovered:
    """Fence the old holder off, then record or resume what it left running."""
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None:
        return Recovered()
    fence.append(thread.stream_name, new_entry(ThreadTakenOver(epoch=fence.epoch)))
    # All the old holder wrote is before the fence. What it left running is on the tail the
    # current view folds (past the director's offset, or a run's start), not the whole log.
    entries, _ = entries_for_view(thread)
    fold = NowFold(run=thread.parent_id is not None)
    for entry in entries:
        fold.apply(entry)
    now = fold.view()
    recovered = Recovered()
    if now.reply is not None:
        recovered.replies = 1
        recovered.resume = _settle_reply(thread, fence, entries, now.reply.dispatchId)
    for run in now.runs:
        # A run on this thread itself (a delegated run's own record is on its child).
        live = run.childThreadId is None and run.state in LIVE_RUN
        if live and orphan(thread, run.runId, run.agentId, RUN_STOPPED, fence.epoch):
            recovered.runs += 1
        elif run.childThreadId is None and run.state in ENDED_RUN and thread.parent_id:
            _report_ended(thread, run, entries, fence.epoch)
    return recovered


def _report_ended(thread: Thread, run, entries, epoch: int) -> None:
    """A run that ended on its own, its worker stopped before it told the parent: tell it
    now (``report_to_parent`` writes nothing if the report is there)."""
    ok, bot = run.state == "finished", run.agentId
    said = [e.payload.text for e in entries if isinstance(e.payload, Chat) and e.authorId == bot]
    report = said[-1] if ok and said else RUN_UNREPORTED
    claim = Claim(run.runId, thread.parent_id, thread.pk, run.agentId or "", "")
    report_to_parent(claim, ok, report, epoch)


def _settle_reply(thread: Thread, fence: FencedWriter, entries, dispatch_id: str):
    started, answered, interrupted, steered = None, False, 0, []
    for e in entries:
        p = e.payload
        if isinstance(p, DispatchStarted) and p.dispatchId == dispatch_id:
            started = e
        elif started is None:
            continue
        elif isinstance(p, Chat) and e.authorId == started.payload.agentId:
            answered = True  # its answer landed; only the finish is missing
        elif isinstance(p, EntryReaction) and p.on and e.authorId == started.payload.agentId:
            answered = True  # an emoji answer (``replies._finish``) is an answer too
        elif isinstance(p, DispatchSteered) and p.dispatchId == dispatch_id:
            steered += [i for i in p.entryIds if i not in steered]
        elif isinstance(p, DispatchFailed) and p.dispatchId == dispatch_id and p.stage == "worker":
            interrupted += 1
    if started is None:  # a reply the fold saw but the log can't place: end it
        answered = False
        interrupted = MAX_RESUMES
    author = started.payload.agentId if started else None
    if answered:
        finished = DispatchFinished(dispatchId=dispatch_id)
        fence.append(thread.stream_name, new_entry(finished, author=author))
        return None
    final = interrupted >= MAX_RESUMES
    failed = DispatchFailed(
        stage="worker",
        error=REPLY_GAVE_UP if final else REPLY_INTERRUPTED,
        attempt=interrupted + 1,
        dispatchId=dispatch_id,
        final=final,
    )
    fence.append(thread.stream_name, new_entry(failed, author=author))
    if final:
        return None
    p = started.payload
    ids = list(p.entryIds) + [i for i in steered if i not in p.entryIds]
    return Resume(StartReply(thread.id, p.agentId, ids, p.round), dispatch_id)
