"""The thread director: decides from the log which bots owe a reply.

A pass reads the thread from the director's decided offset (plus the small
cached tail it kept), folds it, and then does exactly one of:

- nothing, while a reply is running (the reply wakes the director when it ends);
- records ``signal.thread_director.decided`` for new messages that name bots,
  and asks for the first owed bot's reply (one reply at a time per thread);
- records ``signal.thread_director.outcome`` with nobody picked, settling every
  message up to the newest, with the reason nobody speaks.

After an outcome the thread is quiet: the decided offset moves to just after
the outcome and the cached tail keeps the few entries the current view still
needs (the last exchange's signals), so ``/now`` costs what the tail costs.

Whatever the backlog, what a pass writes is bounded: it decides over the newest
``PASS_WINDOW`` waiting messages, and first settles any older ones unanswered with an
outcome that says so (``tooOld``). Who has spoken (the conversation rule) is kept
with the decided offset (``Thread.director_speakers``), so a pass reads only the tail.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from dispatch.decide import BotInfo, Speakers, StartReply, decide
from houses.models import Agent
from streams.errors import BadRequest, PayloadTooLarge
from threads.current import entries_for_view
from threads.entries import (
    Chat,
    DirectorDecided,
    DirectorOutcome,
    DispatchStarted,
    DispatchSteered,
    Entry,
    EntryError,
    PiAssistant,
    PiCompaction,
    PiToolResult,
    PiTyping,
    ThreadChildFinished,
    ThreadRunState,
    to_builtins,
)
from threads.failures import short_reason
from threads.lifecycle import new_entry
from threads.models import Thread, ThreadMember
from threads.narration import too_old
from threads.now import WAITING_SHOWN, NowFold
from threads.reading import read_entries
from threads.recency import stream_writer

TAIL_LIMIT = 50  # entries in the director's cached tail
TAIL_BYTES = 128 * 1024  # and their JSON, at most (the outcome is always kept)
PASS_WINDOW = WAITING_SHOWN  # the newest waiting messages a pass decides over
SPEAKERS_KEPT = 2  # per kind: the conversation rule needs to know "one" from "more"


def house_bots(house_id: int, thread: Thread | None = None) -> list[BotInfo]:
    """The house's bots, retired ones too: a mention of one is answered with a reason.
    For a private ``thread``, which of them are in it (only those take part)."""
    members: set[str] = set()
    if thread is not None and thread.is_private:
        members = set(ThreadMember.objects.filter(thread=thread).values_list("agent_id", flat=True))
    private = thread is not None and thread.is_private
    return [
        BotInfo(
            b.id,
            b.handle,
            bool(b.provider and b.model),
            b.involvement,
            b.active,
            reads=not private or b.id in members,
            direct=thread is not None and thread.is_direct and b.id in members,
        )
        for b in Agent.objects.filter(house_id=house_id, kind=Agent.Kind.BOT)
    ]


@dataclass
class Plan:
    """What a pass appends and starts: a decision, a reply, or an outcome (or nothing)."""

    expired: DirectorOutcome | None = None  # the backlog before the window, settled first
    decided: DirectorDecided | None = None
    start: tuple[str, list[str]] | None = None  # (bot, the messages it takes in)
    outcome: DirectorOutcome | None = None
    round: int = 0


def director_pass(thread_id: str, writer=None) -> StartReply | None:
    """``writer``: the holder's fenced writer (``dispatch.fencing``); its appends stop
    with ``Fenced`` once another engine holds the thread."""
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None or thread.parent_id is not None and thread.run_offset:
        return None  # coding runs have no director
    entries, offset = entries_for_view(thread)
    bots = house_bots(thread.house_id, thread)
    bot_ids = {b.id for b in bots}
    speakers = _merged(known_speakers(thread, bot_ids), speakers_of(entries, bot_ids))
    plan = plan_pass(entries, bots, speakers)
    writer = writer or stream_writer()
    written = []  # what this pass appended, in order
    for payload in (plan.expired, plan.decided):
        if payload is not None:
            written.append(new_entry(payload))
            writer.append(thread.stream_name, written[-1])
    if plan.start is not None:
        agent_id, entry_ids = plan.start
        return StartReply(thread.id, agent_id, entry_ids, plan.round)
    if plan.outcome is not None:
        written.append(new_entry(plan.outcome))
        result = writer.append(thread.stream_name, written[-1])
        _settle_offset(thread, entries, bot_ids, offset, written, result.next_offset, speakers)
    return None


def plan_pass(
    entries: list[Entry], bots: list[BotInfo], speakers: Speakers, *, window: int = PASS_WINDOW
) -> Plan:
    """The pass as a pure function of the entries it read (no I/O: tests drive it).

    It decides over the newest ``window`` waiting messages; older waiting ones are
    settled first, unanswered (``expired``), so nothing it writes grows with a backlog.
    """
    bot_ids = {b.id for b in bots}
    fold = NowFold(bots=bot_ids)
    for entry in entries:
        fold.apply(entry)
    now = fold.view()
    if now.reply is not None:
        return Plan()  # the running reply wakes the director when it ends
    plan = Plan(round=_next_round(entries))
    waiting = fold.waiting_ids()  # every waiting id the fold keeps (bounded), oldest first
    by_id = {e.id: e for e in entries}
    decided = {
        i for e in entries if isinstance(e.payload, DirectorDecided) for i in e.payload.entryIds
    }
    answered = answered_by(entries)
    fresh = [i for i in waiting if i not in decided and i in by_id]
    if len(fresh) > window:
        # A backlog: what no pass decided and no reply took in, older than the window,
        # is settled unanswered (with what the fold only counted), before the decision.
        backlog = sum(1 for i in fresh[:-window] if i not in answered) + fold.older
        if backlog:
            plan.expired = DirectorOutcome(
                upTo=fresh[-window - 1], picked=[], reason=too_old(backlog), tooOld=backlog
            )
        fresh = fresh[-window:]
    undecided = [by_id[i] for i in fresh]
    owed = list(now.owed)
    decision = None
    if undecided:
        decision = decide(
            undecided,
            bots,
            speakers=speakers,
            bot_chain=_bot_chain(entries, bot_ids),
            answered=answered,
        )
        if decision.picked:
            plan.decided = DirectorDecided(
                picked=decision.picked,
                upTo=undecided[-1].id,
                entryIds=[e.id for e in undecided],
            )
            owed += [b for b in decision.picked if b not in owed]
    picked_for = picked_by(entries)
    if plan.decided is not None:
        for i in plan.decided.entryIds:
            picked_for.setdefault(i, set()).update(plan.decided.picked)
    for agent_id in owed:
        # A bot takes in what waits, never its own messages nor what it already took in,
        # nor what another bot took in unless a pass picked this bot for it too (a steered
        # message is answered once per bot that owes it); if a deletion left it nothing to
        # answer, it owes nothing. The newest, at most.
        taken_in = [
            i
            for i in waiting
            if i in by_id
            and by_id[i].authorId != agent_id
            and agent_id not in answered.get(i, ())
            and (not answered.get(i) or agent_id in picked_for.get(i, ()))
        ]
        if taken_in:
            plan.start = (agent_id, taken_in[-window:])
            return plan
    if not waiting and not owed:
        return plan
    plan.outcome = DirectorOutcome(
        upTo=waiting[-1] if waiting else entries[-1].id,
        picked=[],
        reason=decision.reason if decision else None,
        blocked=bool(decision and decision.blocked),
    )
    return plan


def picked_by(entries: list[Entry]) -> dict[str, set[str]]:
    """Message id -> the bots a director pass picked while deciding over it."""
    picked: dict[str, set[str]] = {}
    for e in entries:
        if isinstance(e.payload, DirectorDecided):
            for i in e.payload.entryIds:
                picked.setdefault(i, set()).update(e.payload.picked)
    return picked


def answered_by(entries: list[Entry]) -> dict[str, set[str]]:
    """Message id -> the bots that took it in (started a reply for it, or steered it in)."""
    answered: dict[str, set[str]] = {}
    agent_of: dict[str, str] = {}
    for e in entries:
        p = e.payload
        if isinstance(p, DispatchStarted):
            agent_of[p.dispatchId] = p.agentId
            for i in p.entryIds:
                answered.setdefault(i, set()).add(p.agentId)
        elif isinstance(p, DispatchSteered) and p.dispatchId in agent_of:
            for i in p.entryIds:
                answered.setdefault(i, set()).add(agent_of[p.dispatchId])
    return answered


def speakers_of(entries: list[Entry], bot_ids: set[str]) -> Speakers:
    people, bots = set(), set()
    for e in entries:
        if isinstance(e.payload, Chat) and e.authorId:
            (bots if e.authorId in bot_ids else people).add(e.authorId)
    return Speakers(frozenset(people), frozenset(bots))


def known_speakers(thread: Thread, bot_ids: set[str]) -> Speakers:
    """Who spoke before the decided offset, as the pass that moved it stored it.

    A thread whose offset moved before speakers were kept has none stored: its whole log
    is read once, and the next quiet point stores them.
    """
    if not thread.director_offset:
        return Speakers()  # the pass reads the whole log anyway
    stored = thread.director_speakers
    if not isinstance(stored, dict):
        return speakers_of(read_entries(thread.id)[0], bot_ids)
    return Speakers(frozenset(stored.get("people", ())), frozenset(stored.get("bots", ())))


def _merged(a: Speakers, b: Speakers) -> Speakers:
    return Speakers(a.people | b.people, a.bots | b.bots)


def _stored(speakers: Speakers) -> dict[str, list[str]]:
    # Speakers only grow, and the rule only asks whether there is exactly one of each.
    return {
        "people": sorted(speakers.people)[:SPEAKERS_KEPT],
        "bots": sorted(speakers.bots)[:SPEAKERS_KEPT],
    }


def refused(exc: BaseException) -> bool:
    """A failure that would fail the same way on every retry: an entry our own contract
    refuses, or a store's refusal of the request itself (400, 413)."""
    return isinstance(exc, EntryError | msgspec.ValidationError | BadRequest | PayloadTooLarge)


def give_up(thread_id: str, error: str, writer=None) -> None:
    """After a pass failed for good (``refused``): settle what waits, unanswered, with the
    reason, so the thread leaves working and no wake retries it. The failure itself is
    already in the log; this outcome is a pass over the waiting messages that picked nobody.
    """
    thread = Thread.objects.filter(pk=thread_id).first()
    if thread is None or thread.parent_id is not None and thread.run_offset:
        return
    entries, _ = entries_for_view(thread)
    fold = NowFold(bots={b.id for b in house_bots(thread.house_id)})
    for entry in entries:
        fold.apply(entry)
    now = fold.view()
    if now.reply is not None or not now.waitingCount:
        return
    count = now.waitingCount
    said = f"{count:,} message{'s were' if count != 1 else ' was'} not answered"
    outcome = DirectorOutcome(
        upTo=now.waiting[-1] if now.waiting else entries[-1].id,
        picked=[],
        reason=f"{said}: {short_reason(error)}",
    )
    (writer or stream_writer()).append(thread.stream_name, new_entry(outcome))


def _bot_chain(entries: list[Entry], bot_ids: set[str]) -> int:
    chain = 0
    for e in entries:
        if isinstance(e.payload, Chat):
            chain = chain + 1 if e.authorId in bot_ids else 0
    return chain


def _next_round(entries: list[Entry]) -> int:
    return sum(1 for e in entries if isinstance(e.payload, DispatchStarted))


SKIPPED_IN_TAIL = (PiAssistant, PiToolResult, PiCompaction, PiTyping)
RUN_ENTRIES = (ThreadRunState, ThreadChildFinished)


def _settle_offset(
    thread, entries, bot_ids, read_offset, written, outcome_offset, speakers
) -> None:
    """Move the decided offset past a quiet point, keeping what the view still needs.

    Only when nothing but this pass's own entries (``written``, the outcome last) landed
    after our read: an entry that did must stay past the offset so the next pass (and
    /now) sees it.
    """
    between, _ = read_entries(thread.id, read_offset)
    if [e.id for e in between] != [e.id for e in written] or not outcome_offset:
        return
    recent = {e.id for e in _since_last_person(entries, bot_ids)}
    kept = [
        e
        for e in entries
        # Runs outlive exchanges: their state entries stay however old they are.
        if isinstance(e.payload, RUN_ENTRIES)
        or (e.id in recent and not isinstance(e.payload, SKIPPED_IN_TAIL))
    ]
    tail = _bounded_tail([to_builtins(e) for e in (kept + written)[-TAIL_LIMIT:]])
    Thread.objects.filter(pk=thread.pk, director_offset=thread.director_offset).update(
        director_offset=outcome_offset, director_tail=tail, director_speakers=_stored(speakers)
    )


def _bounded_tail(docs: list[dict]) -> list[dict]:
    """The newest docs whose JSON fits ``TAIL_BYTES``; the last (the outcome) always."""
    kept, size = [], 0
    for doc in reversed(docs):
        size += len(msgspec.json.encode(doc))
        if kept and size > TAIL_BYTES:
            break
        kept.append(doc)
    return kept[::-1]


def _since_last_person(entries: list[Entry], bot_ids: set[str]) -> list[Entry]:
    """The last exchange: from the newest chat not authored by a bot (or all, if none).

    A message a reply steered in belongs to that reply's exchange, which starts earlier.
    """
    steered = {
        i for e in entries if isinstance(e.payload, DispatchSteered) for i in e.payload.entryIds
    }
    for i in range(len(entries) - 1, -1, -1):
        e = entries[i]
        if isinstance(e.payload, Chat) and e.authorId not in bot_ids and e.id not in steered:
            return entries[i:]
    return entries
