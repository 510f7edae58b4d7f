"""The current view of a thread, folded from its entries in order.

``reduce_thread_now(entries, now_ms=…)`` and ``NowFold.apply(entry)`` give the
same ``ThreadNow``: who is working (a reply or a coding run) with its phase and
round, tool calls without a result, messages waiting or taken in mid-reply,
spend of the current reply or run, and why nobody speaks when there is a
reason. Time is passed in, never read: the fold is pure.

Waiting follows the director: a message stays waiting until a director pass
over it ends with nobody picked (``signal.thread_director.outcome`` with an
empty ``picked``); a pick alone doesn't settle it. ``asking`` says a waiting message
names someone (``@handle``) and no pass decided over it nor reply took it in yet.
``derive_thread_status`` turns the view into the thread's status
record. A pass that settles a failed reply's messages without a reason of its own keeps
the failure as the reason nobody speaks.

The fold stays bounded whatever the backlog: it keeps the newest ``PENDING_KEPT``
unsettled messages (older ones are only counted), the places of the newest
``SEEN_KEPT`` settled ones (an outcome's ``upTo`` names one), and the view lists the
newest ``WAITING_SHOWN`` waiting ids with ``waitingCount`` counting them all.

The view's types and ``current_view`` live in ``threads.now_view``, spend arithmetic in
``threads.spend``; both are importable from here too.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from threads import entries as E
from threads.failures import short_reason
from threads.mentioning import names_someone
from threads.now_view import (  # noqa: F401 (the view's names, re-exported)
    LIVE_RUN_STATES,
    WAITING_SHOWN,
    BotRecord,
    ChildRecord,
    Reply,
    Run,
    ThreadNow,
    ToolCall,
    current_view,
    live_children,
    with_delegated_spend,
)
from threads.spend import SPEND_FIELDS, add_spend, max_spend, usage_spend  # noqa: F401

PENDING_KEPT = 500  # unsettled chat the fold keeps by id; older ones are only counted
SEEN_KEPT = 200  # settled chat whose place the fold remembers, for an outcome's ``upTo``


class FoldState(msgspec.Struct):
    """What a view leaves out that the fold needs to go on from it: the chat the fold
    remembers, in order (settling "up to" an id needs the order), the chat not yet settled,
    and how many unsettled ones fell out of ``pending`` (``older``, the newest being
    ``olderLast``). Bounded: about ``SEEN_KEPT + PENDING_KEPT`` ids."""

    seen: list[str] = msgspec.field(default_factory=list)
    pending: list[str] = msgspec.field(default_factory=list)
    older: int = 0
    olderLast: str | None = None
    asking: list[str] = msgspec.field(default_factory=list)  # pending chat naming someone


class NowFold:
    """The fold's state; ``apply`` one entry at a time, ``view()`` at any point.

    ``resume(view, state)`` goes on from a view and its ``state()`` (what ``/now`` answers):
    a client tailing the stream from ``/now``'s offset folds with this same code.
    """

    def __init__(self, *, bots: Iterable[str] = (), run: bool = False):
        self.bot_ids = frozenset(bots)
        # A coding run's own thread has no director: its chat is the run's report, not
        # a message waiting for anyone.
        self.run = run
        self.seen: dict[str, int] = {}  # chat id -> its place, for settling "up to" an id
        self.places = 0  # the next chat's place
        self.pending: list[str] = []  # chat not yet settled by a nobody-picked pass (newest)
        self.older = 0  # unsettled chat that fell out of ``pending``: all older than it
        self.older_last: str | None = None  # the newest of those (its place stays in ``seen``)
        # Pending chat that names someone (``@handle``) and no pass or reply took up yet.
        self.asking: set[str] = set()
        self.taken: list[str] = []
        self.owed: list[str] = []
        self.reply: Reply | None = None
        self.tool_calls: dict[str, ToolCall] = {}
        self.runs: dict[str, Run] = {}
        self.spend = E.Spend()
        self.silence: str | None = None
        self.blocked = False
        self.failed_attempts = 0
        self.bot_records: dict[str, BotRecord] = {}
        self.last_ts = 0
        self.ids: set[str] = set()

    @classmethod
    def resume(
        cls, view: ThreadNow, state: FoldState, *, bots: Iterable[str] = (), run: bool = False
    ) -> NowFold:
        fold = cls(bots=bots, run=run)
        fold.seen = {chat_id: n for n, chat_id in enumerate(state.seen)}
        fold.places = len(fold.seen)
        fold.pending = [i for i in state.pending if i in fold.seen]
        fold.older = state.older
        fold.older_last = state.olderLast if state.olderLast in fold.seen else None
        fold.asking = {i for i in state.asking if i in fold.pending}
        fold.taken = list(view.taken)
        fold.owed = list(view.owed)
        fold.reply = msgspec.structs.replace(view.reply) if view.reply else None
        fold.tool_calls = {call.id: call for call in view.toolCalls}
        fold.runs = {r.runId: msgspec.structs.replace(r) for r in view.runs}
        fold.spend = view.spend
        fold.silence, fold.blocked = view.silence, view.blocked
        fold.failed_attempts = view.failedAttempts
        fold.bot_records = {b.agentId: msgspec.structs.replace(b) for b in view.bots}
        fold.last_ts = view.lastTs
        return fold

    def state(self) -> FoldState:
        return FoldState(
            seen=list(self.seen),
            pending=list(self.pending),
            older=self.older,
            olderLast=self.older_last,
            asking=[i for i in self.pending if i in self.asking],
        )

    def waiting_ids(self) -> list[str]:
        """Every waiting id the fold keeps, oldest first (at most ``PENDING_KEPT``); the
        ``older`` ones before them have no ids here."""
        in_reply = set(self.reply.entryIds) if self.reply else set()
        taken = set(self.taken)
        return [i for i in self.pending if i not in in_reply and i not in taken]

    def apply(self, entry: E.Entry) -> None:
        if entry.id in self.ids:  # the first entry of an id wins
            return
        self.ids.add(entry.id)
        self.last_ts = max(self.last_ts, entry.ts)
        handler = _HANDLERS.get(type(entry.payload))
        if handler is not None:
            handler(self, entry, entry.payload)
        for run in self.runs.values():
            # On a run's own thread every entry is the run's; a parent only hears its end.
            if run.childThreadId is None and run.state in LIVE_RUN_STATES:
                run.lastTs = max(run.lastTs, entry.ts)

    def view(self, now_ms: int = 0) -> ThreadNow:
        waiting = self.waiting_ids()
        return ThreadNow(
            reply=msgspec.structs.replace(self.reply) if self.reply else None,
            runs=[msgspec.structs.replace(r) for r in self.runs.values()],
            toolCalls=list(self.tool_calls.values()),
            waiting=waiting[-WAITING_SHOWN:],
            waitingCount=len(waiting) + self.older,
            asking=any(i in self.asking for i in waiting),
            taken=list(self.taken),
            owed=list(self.owed),
            spend=self.spend,
            silence=self.silence,
            blocked=self.blocked,
            failedAttempts=self.failed_attempts,
            bots=[msgspec.structs.replace(b) for b in self.bot_records.values()],
            lastTs=self.last_ts,
            nowMs=now_ms,
        )

    # -- entries ---------------------------------------------------------------------

    def _chat(self, entry: E.Entry, payload: E.Chat) -> None:
        self.seen[entry.id] = self.places
        self.places += 1
        if not self.run:
            self.pending.append(entry.id)
            if names_someone(payload.text):
                self.asking.add(entry.id)
            if len(self.pending) > PENDING_KEPT:
                # A backlog: the oldest unsettled message is only counted from here on.
                self.older_last = self.pending.pop(0)
                self.asking.discard(self.older_last)
                self.older += 1
        if len(self.seen) > 2 * (SEEN_KEPT + PENDING_KEPT):
            self._forget()
        self.silence, self.blocked = None, False
        if entry.authorId not in self.bot_ids:
            # A person's message starts a new exchange: bots' results no longer stand.
            self.bot_records.clear()
            self.failed_attempts = 0

    def _deleted(self, entry: E.Entry, payload: E.EntryDeleted) -> None:
        target = payload.entryId
        self.pending = [i for i in self.pending if i != target]
        self.asking.discard(target)
        self.taken = [i for i in self.taken if i != target]

    def _assistant(self, entry: E.Entry, payload: E.PiAssistant) -> None:
        # Pi's shapes are Pi's business: anything malformed is skipped, never raised on.
        message = payload.message if isinstance(payload.message, dict) else {}
        content = message.get("content")
        for part in content if isinstance(content, list) else ():
            if isinstance(part, dict) and part.get("type") == "toolCall" and part.get("id"):
                call = ToolCall(str(part["id"]), str(part.get("name", "")), payload.dispatchId)
                self.tool_calls[call.id] = call
        usage = usage_spend(message.get("usage"))
        if usage is None or payload.dispatchId is None:
            return
        # Spend accumulates live, from the current reply's or run's own usage.
        if self.reply and self.reply.dispatchId == payload.dispatchId:
            self.spend = add_spend(self.spend, usage)
        run = self.runs.get(payload.dispatchId)
        if run is not None:
            run.spend = add_spend(run.spend, usage)
            self.spend = add_spend(self.spend, usage) if self.reply is None else self.spend

    def _tool_result(self, entry: E.Entry, payload: E.PiToolResult) -> None:
        if isinstance(payload.message, dict):
            self.tool_calls.pop(str(payload.message.get("toolCallId", "")), None)

    def _decided(self, entry: E.Entry, payload: E.DirectorDecided) -> None:
        self.asking.difference_update(payload.entryIds)  # answered or not, it was heard
        for agent in payload.picked:
            if agent not in self.owed:
                self.owed.append(agent)
        self.silence, self.blocked = None, False

    def _outcome(self, entry: E.Entry, payload: E.DirectorOutcome) -> None:
        if payload.picked:
            return
        if payload.tooOld:
            # Only the backlog before the pass's window: the pass goes on over the rest.
            if payload.upTo in self.seen:
                self._settle(payload.upTo)
            return
        self._settle(payload.upTo)
        self.owed.clear()
        # A pass that closes a failed exchange has no reason of its own: the failure stays
        # the reason nobody speaks.
        kept = self.silence if self.failed_attempts and not payload.reason else None
        self.silence, self.blocked = payload.reason or kept, payload.blocked

    def _settle(self, up_to: str) -> None:
        # A pass "up to" an entry that isn't chat settles everything it had seen.
        last = self.seen.get(up_to, self.places - 1)
        self.pending = [i for i in self.pending if self.seen[i] > last]
        self.asking.intersection_update(self.pending)
        self.taken = [i for i in self.taken if i in self.seen and self.seen[i] > last]
        if self.older_last is not None and self.seen[self.older_last] <= last:
            self.older, self.older_last = 0, None

    def _forget(self) -> None:
        """Drop the places of settled chat but the newest ``SEEN_KEPT`` (deterministic in
        what the fold holds, so a resumed fold forgets exactly what the whole one does)."""
        keep = set(self.pending) | set(self.taken)
        if self.older_last is not None:
            keep.add(self.older_last)
        if self.reply is not None:
            keep.update(self.reply.entryIds)
        settled = [i for i in self.seen if i not in keep]
        gone = set(settled[: max(0, len(settled) - SEEN_KEPT)])
        self.seen = {i: n for i, n in self.seen.items() if i not in gone}

    def _started(self, entry: E.Entry, payload: E.DispatchStarted) -> None:
        self.asking.difference_update(payload.entryIds)
        self.reply = Reply(
            payload.dispatchId,
            payload.agentId,
            list(payload.entryIds),
            payload.round,
            "thinking",
            entry.ts,
        )
        if payload.agentId in self.owed:
            self.owed.remove(payload.agentId)
        self.bot_records[payload.agentId] = BotRecord(payload.agentId, "working")
        self.tool_calls.clear()
        self.spend = E.Spend()
        self.silence, self.blocked = None, False

    def _phase(self, entry: E.Entry, payload: E.DispatchPhase) -> None:
        # A reply's rounds only go forward: a worker that took over an interrupted reply
        # counts its rounds from 0 again (and logs written before retries kept one count
        # per attempt), yet it is the same reply, further on.
        if self.reply and self.reply.dispatchId == payload.dispatchId:
            self.reply.phase = payload.phase
            self.reply.round = max(self.reply.round, payload.round)
        run = self.runs.get(payload.dispatchId)  # a run narrates under its run id
        if run is not None:
            run.phase, run.round = payload.phase, max(run.round, payload.round)

    def _steered(self, entry: E.Entry, payload: E.DispatchSteered) -> None:
        if self.reply and self.reply.dispatchId == payload.dispatchId:
            self.taken.extend(i for i in payload.entryIds if i not in self.taken)
            self.asking.difference_update(payload.entryIds)

    def _finished(self, entry: E.Entry, payload: E.DispatchFinished) -> None:
        # The final figure never undoes what was counted live: take the larger of each.
        mine = self.reply is not None and self.reply.dispatchId == payload.dispatchId
        self.spend = max_spend(self.spend, payload.spend) if mine else payload.spend
        reply = self._end_reply(payload.dispatchId)
        if reply:
            self.bot_records[reply.agentId] = BotRecord(reply.agentId, "done")
        self.failed_attempts = 0

    def _failed(self, entry: E.Entry, payload: E.DispatchFailed) -> None:
        mine = self.reply is not None and self.reply.dispatchId == payload.dispatchId
        if not payload.final:
            if mine:
                # Counted: a reply that goes quiet while retrying reads error, not idle.
                self.reply.phase = "retrying"
                self.failed_attempts = max(self.failed_attempts, payload.attempt)
            return
        if self.reply is not None and not mine:
            return  # another reply's failure, or a wake's: the running reply goes on
        self.failed_attempts = max(self.failed_attempts, payload.attempt)
        self.silence = f"The last attempt failed: {short_reason(payload.error)}"
        reply = self._end_reply(payload.dispatchId)
        if reply:
            self.bot_records[reply.agentId] = BotRecord(reply.agentId, "error", self.silence)

    def _pi_failed(self, entry: E.Entry, payload: E.ThreadPiFailed) -> None:
        if payload.runId and payload.runId in self.runs:
            self.runs[payload.runId].state = "failed"
        if payload.dispatchId is not None:
            # A reply's process: it goes on (a retry) or ends with its own dispatch.failed.
            if self.reply and self.reply.dispatchId == payload.dispatchId:
                self.reply.phase = "retrying"
            return
        self.failed_attempts = max(self.failed_attempts, payload.attempt)
        self.silence = f"Pi failed: {short_reason(payload.error)}"

    def _orphaned(self, entry: E.Entry, payload: E.ThreadOrphaned) -> None:
        self.silence = f"Stopped: {payload.reason}"
        if payload.runId and payload.runId in self.runs:
            self.runs[payload.runId].state = "dead"
        reply = self._end_reply(payload.dispatchId) if payload.dispatchId else None
        if reply:
            self.bot_records[reply.agentId] = BotRecord(reply.agentId, "error", self.silence)

    def _run_state(self, entry: E.Entry, payload: E.ThreadRunState) -> None:
        run = self.runs.get(payload.runId)
        if run is None:
            run = self.runs[payload.runId] = Run(payload.runId, payload.state)
            if payload.childThreadId is None:  # a run on this thread: its spend starts now
                self.spend = E.Spend()
        run.state = payload.state
        run.agentId = payload.agentId or run.agentId
        run.childThreadId = payload.childThreadId or run.childThreadId
        run.lastTs = entry.ts

    def _child_finished(self, entry: E.Entry, payload: E.ThreadChildFinished) -> None:
        for run in self.runs.values():
            if run.childThreadId == payload.childThreadId or run.runId == payload.runId:
                run.state = "finished" if payload.ok else "failed"

    def _end_reply(self, dispatch_id: str | None) -> Reply | None:
        """End the running reply if it is ``dispatch_id``'s; a failure ends only its own."""
        reply = self.reply
        if reply is None or reply.dispatchId != dispatch_id:
            return None
        self.reply = None
        self.tool_calls.clear()
        self.taken.clear()
        return reply


_HANDLERS = {
    E.Chat: NowFold._chat,
    E.EntryDeleted: NowFold._deleted,
    E.PiAssistant: NowFold._assistant,
    E.PiToolResult: NowFold._tool_result,
    E.DirectorDecided: NowFold._decided,
    E.DirectorOutcome: NowFold._outcome,
    E.DispatchStarted: NowFold._started,
    E.DispatchPhase: NowFold._phase,
    E.DispatchSteered: NowFold._steered,
    E.DispatchFinished: NowFold._finished,
    E.DispatchFailed: NowFold._failed,
    E.ThreadPiFailed: NowFold._pi_failed,
    E.ThreadOrphaned: NowFold._orphaned,
    E.ThreadRunState: NowFold._run_state,
    E.ThreadChildFinished: NowFold._child_finished,
}


def reduce_thread_now(
    entries: Iterable[E.Entry], *, now_ms: int, bots: Iterable[str] = (), run: bool = False
) -> ThreadNow:
    """Fold ``entries`` in order into the current view at time ``now_ms``."""
    fold = NowFold(bots=bots, run=run)
    for entry in entries:
        fold.apply(entry)
    return fold.view(now_ms)
