"""A steered message is answered once per bot that owes it (issue 24, item 2).

A director pass is driven with any interleaving of people posting, a running reply
steering in what arrived, replies ending and director passes; whatever the order, no bot
takes a message in twice, and a bot takes in a message another bot steered in only when
a pass picked it for that message.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from dispatch.decide import BotInfo, Speakers
from dispatch.director import plan_pass
from threads import entries as E

PERSON, A, B = "ag_person", "ag_a", "ag_b"
BOTS = [BotInfo(A, "a", True), BotInfo(B, "b", True)]
TEXTS = {"a": "@a look", "b": "@b look", "ab": "@a @b both", "plain": "thanks"}
T0 = 1_700_000_000_000


class Thread:
    def __init__(self):
        self.entries: list[E.Entry] = []
        self.reply: tuple[str, str, int] | None = None  # dispatch, bot, entries before it
        self.steered: set[str] = set()
        self.n = 0

    def add(self, payload, author=None) -> str:
        self.n += 1
        entry = E.Entry(id=f"e{self.n:04d}", ts=T0 + self.n, payload=payload, authorId=author)
        self.entries.append(entry)
        return entry.id

    def post(self, kind: str) -> None:
        self.add(E.Chat(text=TEXTS[kind]), PERSON)

    def director(self) -> None:
        if self.reply is not None:
            return
        plan = plan_pass(self.entries, BOTS, Speakers())
        for payload in (plan.expired, plan.decided):
            if payload is not None:
                self.add(payload)
        if plan.start is not None:
            bot, ids = plan.start
            dispatch = f"d{self.n}"
            self.add(E.DispatchStarted(dispatchId=dispatch, agentId=bot, entryIds=ids))
            self.reply, self.steered = (dispatch, bot, len(self.entries)), set()
        elif plan.outcome is not None:
            self.add(plan.outcome)

    def steer(self) -> None:
        """What a reply does between tool rounds: takes in chat from others since it began."""
        if self.reply is None:
            return
        dispatch, bot, since = self.reply
        arrived = [
            e.id
            for e in self.entries[since:]
            if isinstance(e.payload, E.Chat) and e.authorId != bot and e.id not in self.steered
        ]
        if arrived:
            self.steered.update(arrived)
            self.add(E.DispatchSteered(dispatchId=dispatch, entryIds=arrived), bot)

    def finish(self) -> None:
        if self.reply is None:
            return
        dispatch, bot, _ = self.reply
        self.add(E.Chat(text="done"), bot)
        self.add(E.DispatchFinished(dispatchId=dispatch, spend=E.Spend()), bot)
        self.reply = None


steps = st.lists(
    st.one_of(
        st.tuples(st.just("post"), st.sampled_from(sorted(TEXTS))),
        st.tuples(st.sampled_from(["director", "steer", "finish"]), st.none()),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_no_bot_takes_a_message_in_twice_whatever_the_order(schedule):
    thread = Thread()
    for action, arg in schedule:
        getattr(thread, action)(*([arg] if arg else []))
    for _ in range(20):  # let everything owed run to its end
        thread.finish()
        thread.director()
    taken: dict[tuple[str, str], int] = {}
    agent_of: dict[str, str] = {}
    picked: dict[str, set[str]] = {}
    for e in thread.entries:
        p = e.payload
        if isinstance(p, E.DirectorDecided):
            for i in p.entryIds:
                picked.setdefault(i, set()).update(p.picked)
        if isinstance(p, E.DispatchStarted):
            agent_of[p.dispatchId] = p.agentId
            for i in p.entryIds:
                earlier = {bot for (m, bot) in taken if m == i}
                # Started for a message another bot already took in: only if picked for it.
                assert not earlier - {p.agentId} or p.agentId in picked.get(i, ()), (i, p)
                taken[(i, p.agentId)] = taken.get((i, p.agentId), 0) + 1
        if isinstance(p, E.DispatchSteered):
            for i in p.entryIds:
                key = (i, agent_of[p.dispatchId])
                taken[key] = taken.get(key, 0) + 1
    assert all(n == 1 for n in taken.values()), taken


def test_a_message_one_bot_steered_in_is_not_handed_to_another_owed_bot():
    thread = Thread()
    thread.post("ab")
    thread.director()  # picks a and b; a starts
    thread.post("plain")
    thread.steer()  # a takes the plain message in
    thread.finish()
    thread.director()  # b's turn: the mention and a's answer, not what a steered in
    started = [e.payload for e in thread.entries if isinstance(e.payload, E.DispatchStarted)]
    steered = next(e.payload for e in thread.entries if isinstance(e.payload, E.DispatchSteered))
    assert steered.entryIds == ["e0004"]
    assert [(s.agentId, s.entryIds) for s in started] == [(A, ["e0001"]), (B, ["e0001", "e0006"])]
