"""A thread's status, derived from its current view.

``derive_thread_status(now)`` gives the thread's own record, one per bot that
acted since the last person's message, and one per delegated run; the thread
takes the highest of blocked > working > error > done > idle. Working needs
live evidence: when nothing was written for longer than a reply may run
(``REPLY_TURN_CAP_MS``), a reply or a waiting message has nobody behind it and
reads idle, or error if its attempts failed; a coding run is dead after
``RUN_SILENCE_MS`` of silence.
"""

from __future__ import annotations

import msgspec

from threads.now import LIVE_RUN_STATES, WAITING_SHOWN, ThreadNow
from threads.states import RANK as STATUS_RANK
from threads.states import State as Status

REPLY_TURN_CAP_MS = 10 * 60 * 1000
RUN_SILENCE_MS = 90 * 1000

# Entries that can move the record; tool calls and assistant text can't.
STATUS_MOVING_TYPES = frozenset(
    {
        "chat",
        "signal.entry.deleted",
        "signal.thread_director.decided",
        "signal.thread_director.outcome",
        "signal.dispatch.started",
        "signal.dispatch.phase",
        "signal.dispatch.steered",
        "signal.dispatch.finished",
        "signal.dispatch.failed",
        "signal.thread.run_state",
        "signal.thread.pi_failed",
        "signal.thread.orphaned",
        "signal.thread.child_finished",
    }
)


class Record(msgspec.Struct, frozen=True):
    kind: str  # thread | bot | run
    id: str
    state: str
    message: str = ""


class ThreadStatus(msgspec.Struct, frozen=True):
    state: str
    message: str
    records: list[Record]


def derive_thread_status(now: ThreadNow, *, thread_id: str = "") -> ThreadStatus:
    quiet_ms = now.nowMs - now.lastTs
    live = quiet_ms <= REPLY_TURN_CAP_MS
    records = [_thread_record(now, thread_id, live)]
    for bot in now.bots:
        state, message = bot.state, bot.message
        if state == Status.WORKING and not live:
            state, message = Status.IDLE, "The reply went quiet."
        records.append(Record("bot", bot.agentId, state, message or _bot_message(state)))
    for run in now.runs:
        records.append(_run_record(run, now.nowMs))
    top = max(records, key=lambda r: STATUS_RANK[r.state])
    return ThreadStatus(top.state, top.message, records)


def _thread_record(now: ThreadNow, thread_id: str, live: bool) -> Record:
    if now.blocked:
        return Record("thread", thread_id, Status.BLOCKED, now.silence or "Needs a person.")
    busy = now.reply is not None or now.waitingCount or now.owed or now.taken
    if busy and live:
        return Record("thread", thread_id, Status.WORKING, _working_message(now))
    if now.failedAttempts:
        return Record("thread", thread_id, Status.ERROR, now.silence or "The last attempt failed.")
    if busy:
        return Record("thread", thread_id, Status.IDLE, "Nobody answered in time.")
    return Record("thread", thread_id, Status.IDLE, now.silence or "")


def _working_message(now: ThreadNow) -> str:
    if now.reply is not None:
        reply = now.reply
        return f"{reply.agentId} is {reply.phase} (round {reply.round})"
    if now.owed:
        return f"{len(now.owed)} bot(s) owe a reply"
    return waiting_message(now.waitingCount)


def waiting_message(count: int) -> str:
    """What happens to waiting messages: the next director pass decides who answers them,
    the newest ``WAITING_SHOWN`` at most (older ones are settled unanswered: too old)."""
    if count > WAITING_SHOWN:
        return f"Deciding who answers the newest {WAITING_SHOWN} of {count:,} waiting messages."
    return f"Deciding who answers {count} message{'s' if count != 1 else ''}."


def _bot_message(state: str) -> str:
    return {"working": "Replying.", "done": "Replied.", "error": "The reply failed."}.get(state, "")


def _run_record(run, now_ms: int) -> Record:
    if run.childThreadId is not None and run.status:
        # A delegated run, seen from its parent: the child thread's own stored record.
        return Record("run", run.runId, run.status, run.statusMessage or f"Run {run.state}.")
    if run.state in LIVE_RUN_STATES:
        if run.childThreadId is None and now_ms - run.lastTs > RUN_SILENCE_MS:
            return Record("run", run.runId, Status.ERROR, "The run went silent for 90 s.")
        doing = f": {run.phase} (round {run.round})" if run.phase else "."
        return Record("run", run.runId, Status.WORKING, f"Run {run.state}{doing}")
    if run.state == "finished":
        return Record("run", run.runId, Status.DONE, "Run finished.")
    return Record("run", run.runId, Status.ERROR, f"Run {run.state}.")


def moves_status(entries) -> bool:
    return any(e.type in STATUS_MOVING_TYPES for e in entries)
