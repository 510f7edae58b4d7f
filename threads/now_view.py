"""The current view of a thread as its readers get it (``ThreadNow`` and its parts), and
the one function that completes a fold's view with its delegated runs' records
(``current_view``). ``threads.now`` folds entries into it."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from threads import entries as E
from threads.spend import add_spend

LIVE_RUN_STATES = ("claimed", "running")
WAITING_SHOWN = 100  # waiting ids a view lists (the newest): what a director pass decides over


class ToolCall(msgspec.Struct, frozen=True):
    id: str
    name: str
    dispatchId: str | None = None


class Reply(msgspec.Struct):
    """A bot's reply in progress."""

    dispatchId: str
    agentId: str
    entryIds: list[str]
    round: int = 0
    phase: str = "thinking"
    startedTs: int = 0


class Run(msgspec.Struct):
    """A delegated coding run: on its own thread, or seen from its parent.

    Seen from its parent (``childThreadId`` set), the run's record is the child thread's
    own stored status (``status``, ``statusMessage``), filled in by ``threads.current``.
    """

    runId: str
    state: str
    agentId: str | None = None
    childThreadId: str | None = None
    lastTs: int = 0
    phase: str | None = None
    round: int = 0
    spend: E.Spend = msgspec.field(default_factory=E.Spend)
    status: str | None = None
    statusMessage: str = ""


class BotRecord(msgspec.Struct):
    """What a bot that acted since the last person's message is doing: working, done, error."""

    agentId: str
    state: str
    message: str = ""


class ThreadNow(msgspec.Struct):
    reply: Reply | None = None
    runs: list[Run] = msgspec.field(default_factory=list)
    toolCalls: list[ToolCall] = msgspec.field(default_factory=list)
    waiting: list[str] = msgspec.field(default_factory=list)  # the newest WAITING_SHOWN
    taken: list[str] = msgspec.field(default_factory=list)
    owed: list[str] = msgspec.field(default_factory=list)
    spend: E.Spend = msgspec.field(default_factory=E.Spend)
    waitingCount: int = 0  # every waiting message, listed or not
    # A waiting message names someone (``@handle``) and no pass or reply took it up yet: its
    # author expects an answer, so the thread reads working until the pass (threads.status).
    asking: bool = False
    silence: str | None = None
    blocked: bool = False
    failedAttempts: int = 0
    bots: list[BotRecord] = msgspec.field(default_factory=list)
    lastTs: int = 0
    nowMs: int = 0


class ChildRecord(msgspec.Struct, frozen=True):
    """A delegated run's child thread as its parent shows it: the child's stored status
    record and what the run has spent so far (folded from its ``run_offset``)."""

    status: str
    statusMessage: str = ""
    spend: E.Spend = msgspec.field(default_factory=E.Spend)


def live_children(now: ThreadNow) -> list[str]:
    """The child threads of the delegated runs a view still holds live."""
    return [r.childThreadId for r in now.runs if r.childThreadId and r.state in LIVE_RUN_STATES]


def current_view(now: ThreadNow, children: Mapping[str, ChildRecord]) -> ThreadNow:
    """The one current view, from a fold's view and its live children's records.

    ``/now``, the thread page, its socket and ``arbe thread now`` all go through here
    (each looks ``children`` up its own way: the database, or the API), so none of them
    derives a delegated run differently. A delegated run counts while it is live and its
    child is known (unarchived); its record is the child's own, and while the parent has no
    reply of its own, its spend is theirs. An ended run's result is held on its child.
    """
    kept = [r for r in now.runs if not r.childThreadId]
    for run in now.runs:
        child = children.get(run.childThreadId) if run.childThreadId else None
        if child is not None and run.state in LIVE_RUN_STATES:
            run.status, run.statusMessage = child.status, child.statusMessage
            run.spend = child.spend
            kept.append(run)
    now.runs = kept
    return with_delegated_spend(now)


def with_delegated_spend(now: ThreadNow) -> ThreadNow:
    """While a parent's current work is delegated runs (no reply of its own), its spend is
    theirs (each run's as its child thread folds it)."""
    delegated = [r for r in now.runs if r.childThreadId]
    if now.reply is None and delegated:
        spend = E.Spend()
        for run in delegated:
            spend = add_spend(spend, run.spend)
        now.spend = spend
    return now
