"""The director's plan and the current-view fold over generated plausible threads.

Hypothesis plays people posting (with and without mentions), deleting, director passes,
replies that spend, steer, finish or fail, and wake failures with no dispatch id, then
checks what must hold whatever the order:

- no bot owes a reply to its own message (no reply takes in its own bot's chat);
- each person message is answered at most once per bot (started for it or steered in);
- ``waiting`` never holds a tombstoned id;
- spend never decreases within a reply.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dispatch.decide import EVERYTHING, MENTIONS, BotInfo
from dispatch.director import plan_pass, speakers_of
from threads import entries as E
from threads.now import NowFold

PEOPLE = ("ag_ann", "ag_bo")
BOT_A, BOT_B = "ag_a", "ag_b"
HANDLES = {BOT_A: "a", BOT_B: "b"}

person = st.sampled_from(PEOPLE)
mentioned = st.lists(st.sampled_from(sorted(HANDLES)), max_size=2, unique=True)
usage = st.one_of(
    st.builds(
        lambda i, o: {"input": i, "output": o, "totalTokens": i + o, "cost": {"total": o / 1e6}},
        st.integers(0, 500),
        st.integers(0, 50),
    ),
    st.sampled_from(["junk", None, {"input": "x"}, {"input": -5}]),  # malformed: skipped
)
action = st.one_of(
    st.tuples(st.just("post"), person, mentioned),
    st.tuples(st.just("delete"), st.integers(0, 30)),
    st.tuples(st.just("pass")),
    st.tuples(st.just("usage"), usage, st.booleans()),
    st.tuples(st.just("steer")),
    st.tuples(st.just("finish"), mentioned),
    st.tuples(st.just("fail"), st.booleans()),
)


class World:
    def __init__(self, involvement_a: str, window: int = 100):
        self.window = window
        self.bots = [
            BotInfo(BOT_A, "a", True, involvement_a),
            BotInfo(BOT_B, "b", True, MENTIONS),
        ]
        self.bot_ids = {BOT_A, BOT_B}
        self.entries: list[E.Entry] = []
        self.fold = NowFold(bots=self.bot_ids)
        self.reply: tuple[str, str, int] | None = None  # dispatch id, bot, log index at start
        self.deleted: set[str] = set()
        self.spend_seen = 0

    def add(self, payload, author=None) -> E.Entry:
        n = len(self.entries)
        entry = E.Entry(id=f"e{n}", ts=1_000 + n, payload=payload, authorId=author)
        self.entries.append(entry)
        self.fold.apply(entry)
        now = self.fold.view()
        assert not set(now.waiting) & self.deleted, "waiting holds a tombstoned id"
        if self.reply is not None:  # up to and including its end
            assert now.spend.totalTokens >= self.spend_seen, "spend went down within a reply"
            self.spend_seen = now.spend.totalTokens
        return entry

    def chat_ids(self) -> list[str]:
        return [e.id for e in self.entries if isinstance(e.payload, E.Chat)]

    def author(self, entry_id: str) -> str | None:
        return next(e.authorId for e in self.entries if e.id == entry_id)

    def step(self, act) -> None:
        kind = act[0]
        if kind == "post":
            _, who, handles = act
            text = " ".join(f"@{h}" for h in handles) + " hello"
            self.add(E.Chat(text=text), who)
        elif kind == "delete":
            ids = [i for i in self.chat_ids() if i not in self.deleted]
            if ids:
                target = ids[act[1] % len(ids)]
                self.deleted.add(target)
                self.add(E.EntryDeleted(entryId=target), PEOPLE[0])
        elif kind == "pass":
            self.director_pass()
        elif self.reply is None:
            if kind == "fail" and not act[1]:
                self.add(E.DispatchFailed(stage="wake", error="down"))
        else:
            self.reply_step(act)

    def director_pass(self) -> None:
        if self.reply is not None:
            return
        speakers = speakers_of(self.entries, self.bot_ids)
        plan = plan_pass(self.entries, self.bots, speakers, window=self.window)
        if plan.expired is not None:
            self.add(plan.expired)
        if plan.decided is not None:
            self.add(plan.decided)
        if plan.start is not None:
            agent, ids = plan.start
            dispatch = f"d{len(self.entries)}"
            self.add(E.DispatchStarted(dispatchId=dispatch, agentId=agent, entryIds=ids), agent)
            self.reply, self.spend_seen = (dispatch, agent, len(self.entries)), 0
        elif plan.outcome is not None:
            self.add(plan.outcome)

    def reply_step(self, act) -> None:
        dispatch, bot, since = self.reply
        kind = act[0]
        if kind == "usage":
            _, used, tool = act
            content = [{"type": "toolCall", "id": f"c{len(self.entries)}", "name": "bash"}]
            message = {"role": "assistant", "content": content if tool else "text", "usage": used}
            self.add(E.PiAssistant(dispatchId=dispatch, message=message), bot)
        elif kind == "steer":
            gone = self.deleted
            arrived = [
                e.id
                for e in self.entries[since:]
                if isinstance(e.payload, E.Chat) and e.authorId != bot and e.id not in gone
            ]
            if arrived:
                self.add(E.DispatchSteered(dispatchId=dispatch, entryIds=arrived), bot)
                self.reply = (dispatch, bot, len(self.entries))
        elif kind == "finish":
            text = " ".join(f"@{h}" for h in act[1]) + " done"
            self.add(E.Chat(text=text), bot)
            self.add(E.DispatchFinished(dispatchId=dispatch), bot)
            self.reply = None
        elif kind == "fail":
            self.add(E.DispatchFailed(stage="model", error="x", dispatchId=dispatch), bot)
            self.reply = None
            if not act[1]:  # and a wake failure with no id right after
                self.add(E.DispatchFailed(stage="wake", error="down"))

    def settle(self) -> None:
        """Let the director and replies run until nothing more happens."""
        for _ in range(40):
            if self.reply is not None:
                self.reply_step(("finish", []))
                continue
            before = len(self.entries)
            self.director_pass()
            if len(self.entries) == before and self.reply is None:
                return
        raise AssertionError("the director never went quiet")

    def check_answers(self) -> None:
        taken: Counter[tuple[str, str]] = Counter()
        agent_of: dict[str, str] = {}
        for e in self.entries:
            p = e.payload
            if isinstance(p, E.DispatchStarted):
                agent_of[p.dispatchId] = p.agentId
                pairs = [(i, p.agentId) for i in p.entryIds]
            elif isinstance(p, E.DispatchSteered):
                pairs = [(i, agent_of[p.dispatchId]) for i in p.entryIds]
            else:
                continue
            for message, bot in pairs:
                assert self.author(message) != bot, "a bot took in its own message"
                taken[message, bot] += 1
        for (message, bot), count in taken.items():
            if self.author(message) in PEOPLE:
                assert count == 1, f"{message} answered {count} times by {bot}"


SPENDING_REPLY = [
    ("post", "ag_ann", ["a"]),
    ("pass",),
    ("usage", {"input": 5, "output": 1, "totalTokens": 6}, True),
    ("post", "ag_bo", ["a", "b"]),
    ("steer",),
    ("usage", {"input": 7, "output": 2, "totalTokens": 9}, False),
    ("finish", ["b"]),
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(action, max_size=40), st.sampled_from([MENTIONS, EVERYTHING]))
@example(SPENDING_REPLY, MENTIONS)
def test_generated_threads_keep_the_dispatch_invariants(actions, involvement):
    world = World(involvement)
    for act in actions:
        world.step(act)
    world.settle()
    world.check_answers()
    now = world.fold.view()
    assert now.reply is None and now.owed == [] and now.waiting == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(action, max_size=40), st.sampled_from([MENTIONS, EVERYTHING]), st.integers(1, 3))
def test_a_small_window_keeps_the_invariants_and_bounds_what_a_pass_takes(
    actions, involvement, window
):
    """A pass decides over the newest ``window`` waiting messages and settles older ones
    unanswered: nothing is answered twice, nothing waits for ever, nothing grows."""
    world = World(involvement, window=window)
    for act in actions:
        world.step(act)
    world.settle()
    world.check_answers()
    for e in world.entries:
        if isinstance(e.payload, E.DirectorDecided | E.DispatchStarted):
            assert len(e.payload.entryIds) <= window
    now = world.fold.view()
    assert now.reply is None and now.owed == [] and now.waiting == [] and now.waitingCount == 0


def test_a_steered_message_is_not_answered_again_after_its_reply():
    world = World(MENTIONS)
    world.step(("post", "ag_ann", ["a"]))
    world.director_pass()
    world.step(("post", "ag_ann", ["a"]))  # arrives mid-reply, mentions the same bot
    world.reply_step(("steer",))
    world.reply_step(("finish", []))
    world.settle()
    world.check_answers()
    started = [e for e in world.entries if isinstance(e.payload, E.DispatchStarted)]
    assert len(started) == 1


def test_a_failure_without_a_dispatch_id_leaves_the_running_reply_alone():
    world = World(MENTIONS)
    world.step(("post", "ag_ann", ["a"]))
    world.director_pass()
    world.add(E.DispatchFailed(stage="wake", error="down"))
    now = world.fold.view()
    assert now.reply is not None and now.bots[0].state == "working"
