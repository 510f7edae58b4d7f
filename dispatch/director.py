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
"""

from __future__ import annotations

from dataclasses import dataclass

from dispatch.decide import BotInfo, Speakers, StartReply, decide
from houses.models import Agent
from threads.current import entries_for_view
from threads.entries import (
    Chat,
    DirectorDecided,
    DirectorOutcome,
    DispatchStarted,
    DispatchSteered,
    Entry,
    PiAssistant,
    PiCompaction,
    PiToolResult,
    PiTyping,
    ThreadChildFinished,
    ThreadRunState,
    to_builtins,
)
from threads.lifecycle import new_entry
from threads.models import Thread
from threads.now import NowFold
from threads.reading import read_entries
from threads.recency import stream_writer

TAIL_LIMIT = 50


def house_bots(house_id: int) -> list[BotInfo]:
    """The house's bots, retired ones too: a mention of one is answered with a reason."""
    return [
        BotInfo(b.id, b.handle, bool(b.provider and b.model), b.involvement, b.active)
        for b in Agent.objects.filter(house_id=house_id, kind=Agent.Kind.BOT)
    ]


@dataclass
class Plan:
    """What a pass appends and starts: a decision, a reply, or an outcome (or nothing)."""

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
    bots = house_bots(thread.house_id)
    bot_ids = {b.id for b in bots}
    speakers = speakers_of(entries, bot_ids)
    if thread.director_offset and speakers.conversation_bot() is not None:
        # The tail alone looks like a conversation; only the whole thread can say.
        speakers = speakers_of(read_entries(thread.id)[0], bot_ids)
    plan = plan_pass(entries, bots, speakers)
    writer = writer or stream_writer()
    if plan.decided is not None:
        writer.append(thread.stream_name, new_entry(plan.decided))
    if plan.start is not None:
        agent_id, entry_ids = plan.start
        return StartReply(thread.id, agent_id, entry_ids, plan.round)
    if plan.outcome is not None:
        outcome = new_entry(plan.outcome)
        result = writer.append(thread.stream_name, outcome)
        _settle_offset(thread, entries, bot_ids, offset, outcome, result.next_offset)
    return None


def plan_pass(entries: list[Entry], bots: list[BotInfo], speakers: Speakers) -> Plan:
    """The pass as a pure function of the entries it read (no I/O: tests drive it)."""
    bot_ids = {b.id for b in bots}
    fold = NowFold(bots=bot_ids)
    for entry in entries:
        fold.apply(entry)
    now = fold.view()
    if now.reply is not None:
        return Plan()  # the running reply wakes the director when it ends
    by_id = {e.id: e for e in entries}
    decided = {
        i for e in entries if isinstance(e.payload, DirectorDecided) for i in e.payload.entryIds
    }
    undecided = [by_id[i] for i in now.waiting if i not in decided and i in by_id]
    owed = list(now.owed)
    plan = Plan(round=_next_round(entries))
    decision = None
    answered = answered_by(entries)
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
    for agent_id in owed:
        # A bot takes in what waits, never its own messages nor what it already took in;
        # if a deletion left it nothing to answer, it owes nothing.
        taken_in = [
            i
            for i in now.waiting
            if i in by_id and by_id[i].authorId != agent_id and agent_id not in answered.get(i, ())
        ]
        if taken_in:
            plan.start = (agent_id, taken_in)
            return plan
    if not now.waiting and not owed:
        return plan
    plan.outcome = DirectorOutcome(
        upTo=now.waiting[-1] if now.waiting else entries[-1].id,
        picked=[],
        reason=decision.reason if decision else None,
        blocked=bool(decision and decision.blocked),
    )
    return plan


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


def _settle_offset(thread, entries, bot_ids, read_offset, outcome, outcome_offset) -> None:
    """Move the decided offset past a quiet point, keeping what the view still needs.

    Only when nothing else landed between our read and the outcome: an entry that did
    must stay past the offset so the next pass (and /now) sees it.
    """
    between, _ = read_entries(thread.id, read_offset)
    if [e.id for e in between] != [outcome.id] or not outcome_offset:
        return
    recent = {e.id for e in _since_last_person(entries, bot_ids)}
    kept = [
        e
        for e in entries
        # Runs outlive exchanges: their state entries stay however old they are.
        if isinstance(e.payload, RUN_ENTRIES)
        or (e.id in recent and not isinstance(e.payload, SKIPPED_IN_TAIL))
    ]
    tail = [to_builtins(e) for e in (kept + [outcome])[-TAIL_LIMIT:]]
    Thread.objects.filter(pk=thread.pk, director_offset=thread.director_offset).update(
        director_offset=outcome_offset, director_tail=tail
    )


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
