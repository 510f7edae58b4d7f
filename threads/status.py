"""A thread's status, derived from its current view.

``derive_thread_status(now)`` gives the thread's own record, one per bot that
acted since the last person's message, and one per delegated run; the thread
takes the highest of blocked > working > error > done > idle. Working means a bot
was picked (a reply runs, or a picked bot still owes one), or a message that names
someone waits for the director's pass; any other waiting message reads idle ("Deciding
who answers …", docs/decisions.md). Working needs
live evidence: when nothing was written for longer than a reply may run
(``REPLY_TURN_CAP_MS``), a reply or a waiting message has nobody behind it and
reads idle, or error if its attempts failed. A coding run lives by its worker's lease
heartbeat, which no entry shows: it reads working until the log says it ended (its
worker's takeover or the sweep orphans it, ``dispatch.supervision``), however long it
sits in one tool call.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from threads.now import LIVE_RUN_STATES, WAITING_SHOWN, ThreadNow
from threads.states import RANK as STATUS_RANK
from threads.states import State as Status

# A reply's phase as the page says it ("Ari is thinking"), shared with its Now panel.
PHASE_WORDS = {
    "thinking": "is thinking",
    "tool": "is running a tool",
    "answering": "is writing",
    "steering": "is reading new messages",
    "retrying": "is trying again",
}

REPLY_TURN_CAP_MS = 10 * 60 * 1000
QUIET_AFTER_FAILURE = "The reply went quiet after a failed attempt."

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


def derive_thread_status(
    now: ThreadNow, *, thread_id: str = "", name_of: Callable[[str], str] | None = None
) -> ThreadStatus:
    """``name_of`` turns a bot's agent id into its name for the message (people read
    names, never ids); without it the message says "A bot"."""
    quiet_ms = now.nowMs - now.lastTs
    live = quiet_ms <= REPLY_TURN_CAP_MS
    records = [_thread_record(now, thread_id, live, name_of or _a_bot)]
    for bot in now.bots:
        state, message = bot.state, bot.message
        if state == Status.WORKING and not live:
            state, message = Status.IDLE, "The reply went quiet."
            if now.failedAttempts and now.reply is not None:
                state, message = Status.ERROR, QUIET_AFTER_FAILURE
        records.append(Record("bot", bot.agentId, state, message or _bot_message(state)))
    for run in now.runs:
        records.append(_run_record(run, now.nowMs))
    top = max(records, key=lambda r: STATUS_RANK[r.state])
    return ThreadStatus(top.state, top.message, records)


def _a_bot(agent_id: str) -> str:
    return "A bot"


def _thread_record(now: ThreadNow, thread_id: str, live: bool, name_of) -> Record:
    if now.blocked:
        return Record("thread", thread_id, Status.BLOCKED, now.silence or "Needs a person.")
    # Working only once a bot was picked; a message the director hasn't passed over waits.
    picked = now.reply is not None or now.owed or now.taken
    if picked and live:
        return Record("thread", thread_id, Status.WORKING, _working_message(now, name_of))
    if now.waitingCount and live:
        # Even after a failed attempt: the director's next pass decides (the sweep wakes it).
        # Whoever named someone expects an answer: working until the pass says otherwise.
        state = Status.WORKING if now.asking else Status.IDLE
        return Record("thread", thread_id, state, waiting_message(now.waitingCount))
    if now.failedAttempts and now.reply is not None:
        # The reply was retrying a failed attempt when it went quiet: that failure stands.
        return Record("thread", thread_id, Status.ERROR, QUIET_AFTER_FAILURE)
    if now.failedAttempts:
        return Record("thread", thread_id, Status.ERROR, now.silence or "The last attempt failed.")
    if picked or now.waiting:
        return Record("thread", thread_id, Status.IDLE, "Nobody answered in time.")
    return Record("thread", thread_id, Status.IDLE, now.silence or "")


def plural(n: int, one: str, many: str) -> str:
    """``1 message``, ``2 messages``: the count with its noun."""
    return f"{n:,} {one if n == 1 else many}"


# The idle record of a thread whose message waits for the director's pass; the sweep
# finds such rows by it (``threads.status_sync.working_threads``).
DECIDING = "Deciding who answers"


def _working_message(now: ThreadNow, name_of) -> str:
    if now.reply is not None:
        reply = now.reply
        return f"{name_of(reply.agentId)} {PHASE_WORDS.get(reply.phase, 'is replying')}"
    if len(now.owed) == 1:
        return f"{name_of(now.owed[0])} owes a reply"
    return f"{plural(len(now.owed), 'bot', 'bots')} owe a reply"


def waiting_message(count: int) -> str:
    """What happens to waiting messages: the next director pass decides who answers them,
    the newest ``WAITING_SHOWN`` at most (older ones are settled unanswered: too old)."""
    if count > WAITING_SHOWN:
        return f"{DECIDING} the newest {WAITING_SHOWN} of {count:,} waiting messages."
    return f"{DECIDING} {plural(count, 'waiting message', 'waiting messages')}."


def _bot_message(state: str) -> str:
    return {"working": "Replying.", "done": "Replied.", "error": "The reply failed."}.get(state, "")


def _run_record(run, now_ms: int) -> Record:
    if run.childThreadId is not None and run.status:
        # A delegated run, seen from its parent: the child thread's own stored record.
        return Record("run", run.runId, run.status, run.statusMessage or f"Run {run.state}.")
    if run.state in LIVE_RUN_STATES:
        doing = f": {run.phase} (round {run.round})" if run.phase else "."
        return Record("run", run.runId, Status.WORKING, f"Run {run.state}{doing}")
    if run.state == "finished":
        return Record("run", run.runId, Status.DONE, "Run finished.")
    return Record("run", run.runId, Status.ERROR, f"Run {run.state}.")


def moves_status(entries) -> bool:
    return any(e.type in STATUS_MOVING_TYPES for e in entries)


def next_change_ms(now: ThreadNow) -> int | None:
    """When time alone next changes ``derive_thread_status(now)``: a live reply or waiting
    message going quiet past ``REPLY_TURN_CAP_MS``. None when nothing is waiting on the
    clock (a run's end is always an entry).

    A view shown for a while (the open page, ``arbe thread now --follow``) derives again at
    that moment, so it says what ``/now`` would say without a new entry to prompt it.
    """
    deadlines = []
    working_bot = any(b.state == Status.WORKING for b in now.bots)
    if now.reply is not None or now.owed or now.taken or now.waitingCount or working_bot:
        deadlines.append(now.lastTs + REPLY_TURN_CAP_MS + 1)
    later = [d for d in deadlines if d > now.nowMs]
    return min(later) if later else None
