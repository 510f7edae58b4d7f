"""The current-view fold and the status it derives: a scenario table, then properties."""

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from threads import entries as E
from threads.now import FoldState, NowFold, reduce_thread_now
from threads.status import REPLY_TURN_CAP_MS, derive_thread_status

PERSON, BOT, BOT2 = "ag_person", "ag_bot", "ag_bot2"
BOTS = {BOT, BOT2}
T0 = 1_700_000_000_000


class Log:
    """Builds entries with increasing ids and times."""

    def __init__(self):
        self.entries: list[E.Entry] = []

    def add(self, payload, author=None, gap_ms=1000, id=None):
        ts = (self.entries[-1].ts if self.entries else T0) + gap_ms
        entry = E.Entry(id=id or f"e{len(self.entries)}", ts=ts, payload=payload, authorId=author)
        self.entries.append(entry)
        return entry.id

    def chat(self, text="hi @bot", author=PERSON, **kw):
        return self.add(E.Chat(text=text), author, **kw)

    @property
    def last_ts(self):
        return self.entries[-1].ts


def view(log, now_ms=None):
    return reduce_thread_now(log.entries, now_ms=now_ms or log.last_ts + 1, bots=BOTS)


def status(log, now_ms=None):
    return derive_thread_status(view(log, now_ms))


def test_a_mention_is_waiting():
    log = Log()
    m = log.chat()
    now = view(log)
    assert now.waiting == [m] and now.reply is None and now.asking
    # Its author named someone and expects an answer: working until the director's pass.
    s = status(log)
    assert (s.state, s.message) == ("working", "Deciding who answers 1 waiting message.")


def test_a_message_naming_nobody_waits_idle():
    log = Log()
    log.chat("just saying")
    now = view(log)
    assert now.waitingCount == 1 and not now.asking
    s = status(log)
    assert (s.state, s.message) == ("idle", "Deciding who answers 1 waiting message.")


def test_a_mention_stops_asking_once_a_pass_heard_it():
    log = Log()
    m = log.chat("@olive look")  # a person: the pass picks nobody
    assert status(log).state == "working"
    log.add(E.DirectorOutcome(upTo=m, picked=[]))
    assert status(log).state == "idle" and not view(log).asking


def test_the_director_picks_and_a_reply_works():
    log = Log()
    m = log.chat()
    log.add(E.DirectorDecided(picked=[BOT], upTo=m, entryIds=[m]))
    now = view(log)
    assert now.owed == [BOT] and now.waiting == [m]  # a pick alone doesn't settle it
    assert status(log).state == "working"  # a bot was picked
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.add(E.DispatchPhase(dispatchId="d1", phase="tool", round=1))
    now = view(log)
    assert (now.reply.agentId, now.reply.phase, now.reply.round) == (BOT, "tool", 1)
    assert now.owed == [] and now.waiting == []
    s = derive_thread_status(view(log), name_of={BOT: "Ari"}.get)
    assert (s.state, s.message) == ("working", "Ari is running a tool")
    assert BOT not in status(log).message  # never an id, even without names


def test_a_replys_round_never_goes_back():
    """A worker that takes over an interrupted reply counts its rounds from 0 again (as did
    each retried attempt, before they shared one count): the view keeps the furthest."""
    log = Log()
    m = log.chat()
    log.add(E.DirectorDecided(picked=[BOT], upTo=m, entryIds=[m]))
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.add(E.DispatchPhase(dispatchId="d1", phase="tool", round=1), BOT)
    assert view(log).reply.round == 1
    log.add(E.DispatchPhase(dispatchId="d1", phase="thinking", round=0), BOT)
    now = view(log)
    assert (now.reply.round, now.reply.phase) == (1, "thinking")
    log.add(E.DispatchPhase(dispatchId="d1", phase="answering", round=2), BOT)
    assert view(log).reply.round == 2


def test_tool_calls_stay_open_until_their_result():
    log = Log()
    m = log.chat()
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
    log.add(E.PiAssistant(dispatchId="d1", message={"role": "assistant", "content": [call]}))
    assert [(c.id, c.name) for c in view(log).toolCalls] == [("c1", "read")]
    log.add(E.PiToolResult(dispatchId="d1", message={"role": "toolResult", "toolCallId": "c1"}))
    assert view(log).toolCalls == []


def test_a_steered_message_is_taken_not_waiting():
    log = Log()
    m1 = log.chat()
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m1]))
    m2 = log.chat("also this")
    assert view(log).waiting == [m2]
    log.add(E.DispatchSteered(dispatchId="d1", entryIds=[m2]))
    now = view(log)
    assert now.taken == [m2] and now.waiting == []


def answered(log):
    m = log.chat()
    log.add(E.DirectorDecided(picked=[BOT], upTo=m))
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    answer = log.chat("here you go", author=BOT)
    spend = E.Spend(input=100, output=20, totalTokens=120, costUsd=0.01)
    log.add(E.DispatchFinished(dispatchId="d1", spend=spend))
    log.add(E.DirectorOutcome(upTo=answer, picked=[], reason="nobody mentioned"))
    return m


def test_a_bot_answer_is_done():
    log = Log()
    answered(log)
    now = view(log)
    assert now.reply is None and now.waiting == [] and now.spend.costUsd == 0.01
    assert [(b.agentId, b.state) for b in now.bots] == [(BOT, "done")]
    assert status(log).state == "done"


def test_a_new_message_resets_the_bots():
    log = Log()
    answered(log)
    log.chat("thanks, one more thing")
    now = view(log)
    assert now.bots == []
    assert status(log).state == "idle"  # the new message waits for the director


def test_another_bots_answer_does_not_erase_a_bots_failure():
    """The case behind "a person's message resets the bots" (docs/decisions.md): both bots
    were asked, one failed; the other's answer is a new message, yet the failure stands
    until a person writes again."""
    log = Log()
    m = log.chat("@bot @bot2 both of you")
    log.add(E.DirectorDecided(picked=[BOT, BOT2], upTo=m, entryIds=[m]))
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.add(E.DispatchFailed(stage="model", error="boom", attempt=2, dispatchId="d1"))
    log.add(E.DispatchStarted(dispatchId="d2", agentId=BOT2, entryIds=[m]))
    log.chat("here is my half", author=BOT2)
    log.add(E.DispatchFinished(dispatchId="d2", spend=E.Spend()))
    now = view(log)
    assert {(b.agentId, b.state) for b in now.bots} == {(BOT, "error"), (BOT2, "done")}
    assert status(log).state == "error"
    log.chat("ok, thanks")  # a person's message starts a new exchange
    assert view(log).bots == []


def test_a_second_mentioned_bot_is_still_owed():
    log = Log()
    m = log.chat("@bot and @bot2")
    log.add(E.DirectorDecided(picked=[BOT, BOT2], upTo=m))
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.chat("done", author=BOT)
    log.add(E.DispatchFinished(dispatchId="d1"))
    now = view(log)
    assert now.owed == [BOT2]
    assert status(log).state == "working"


def test_nobody_picked_settles_and_says_why():
    log = Log()
    m = log.chat("no mention here")
    log.add(E.DirectorOutcome(upTo=m, picked=[], reason="No bot was mentioned."))
    now = view(log)
    assert now.waiting == [] and now.silence == "No bot was mentioned."
    s = status(log)
    assert (s.state, s.message) == ("idle", "No bot was mentioned.")


def test_a_blocked_outcome_blocks_the_thread():
    log = Log()
    m = log.chat("@ghost")
    log.add(E.DirectorOutcome(upTo=m, reason="@ghost has no model configured.", blocked=True))
    assert status(log).state == "blocked"


def test_a_failed_attempt_is_an_error():
    log = Log()
    m = log.chat()
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.add(E.DispatchFailed(dispatchId="d1", stage="model", error="500", attempt=1, final=False))
    assert view(log).reply.phase == "retrying"
    log.add(E.DispatchFailed(dispatchId="d1", stage="model", error="500", attempt=3))
    now = view(log)
    assert now.reply is None and now.failedAttempts == 3 and "500" in now.silence
    s = status(log)  # the bot's failed reply speaks; the message waits for the next pass
    assert (s.state, s.records[0].state) == ("error", "idle")
    log.add(E.DirectorOutcome(upTo=m, picked=[], reason="The last attempt failed."))
    assert status(log).state == "error"


def test_ten_minutes_of_silence_makes_a_waiting_message_idle():
    log = Log()
    m = log.chat()
    log.add(E.DirectorDecided(picked=[BOT], upTo=m, entryIds=[m]))
    assert status(log, log.last_ts + REPLY_TURN_CAP_MS).state == "working"
    s = status(log, log.last_ts + REPLY_TURN_CAP_MS + 1)
    assert (s.state, s.message) == ("idle", "Nobody answered in time.")


def test_a_silent_reply_with_failed_attempts_reads_error():
    log = Log()
    m = log.chat()
    log.add(E.DispatchFailed(stage="wake", error="down"))
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    assert status(log, log.last_ts + REPLY_TURN_CAP_MS + 1).state == "error"


def test_a_run_is_working_however_long_it_is_silent_until_the_log_says_it_ended():
    # Its liveness is its worker's lease heartbeat; the log tells its end (orphaned).
    log = Log()
    log.add(E.ThreadRunState(runId="r1", state="running", agentId=BOT))
    assert status(log, log.last_ts + 30 * 60 * 1000).state == "working"
    log.add(E.ThreadOrphaned(reason="The worker running the run stopped.", runId="r1"))
    log.add(E.ThreadRunState(runId="r1", state="dead", agentId=BOT))
    assert status(log, log.last_ts + 1).state == "error"


def test_a_child_report_finishes_the_run_on_the_parent_and_survives_new_messages():
    log = Log()
    log.add(E.ThreadRunState(runId="r1", state="claimed", childThreadId="kid"))
    assert status(log).state == "working"
    log.add(E.ThreadChildFinished(childThreadId="kid", report="All green.", runId="r1"))
    assert status(log).state == "done"
    log.add(E.DirectorOutcome(upTo=log.chat("great"), picked=[], reason="No bot was mentioned."))
    assert status(log).state == "done"  # a person's message doesn't reset a run's result


def test_deleted_chat_is_no_longer_waiting():
    log = Log()
    m = log.chat()
    log.add(E.EntryDeleted(entryId=m), author=PERSON)
    assert view(log).waiting == []
    assert status(log).state == "idle"


# Properties -----------------------------------------------------------------------------

IDS = [f"m{i}" for i in range(4)]
payloads = st.one_of(
    st.builds(E.Chat, text=st.just("hi")),
    st.builds(E.EntryDeleted, entryId=st.sampled_from(IDS)),
    st.builds(
        E.DirectorDecided,
        picked=st.lists(st.sampled_from([BOT, BOT2]), max_size=2),
        upTo=st.sampled_from(IDS),
    ),
    st.builds(
        E.DirectorOutcome, upTo=st.sampled_from(IDS), picked=st.just([]), reason=st.just("r")
    ),
    st.builds(
        E.DispatchStarted,
        dispatchId=st.sampled_from(["d1", "d2"]),
        agentId=st.sampled_from([BOT, BOT2]),
        entryIds=st.lists(st.sampled_from(IDS), max_size=2),
    ),
    st.builds(
        E.DispatchPhase,
        dispatchId=st.sampled_from(["d1", "d2"]),
        phase=st.just("tool"),
        round=st.integers(0, 3),
    ),
    st.builds(
        E.DispatchSteered,
        dispatchId=st.sampled_from(["d1", "d2"]),
        entryIds=st.lists(st.sampled_from(IDS), min_size=1, max_size=2),
    ),
    st.builds(E.DispatchFinished, dispatchId=st.sampled_from(["d1", "d2"])),
    st.builds(
        E.DispatchFailed,
        dispatchId=st.sampled_from(["d1", "d2"]),
        stage=st.just("model"),
        error=st.just("x"),
        final=st.booleans(),
    ),
    st.builds(
        E.ThreadRunState,
        runId=st.just("r1"),
        state=st.sampled_from(["claimed", "running", "finished"]),
    ),
)
logs = st.lists(
    st.tuples(payloads, st.sampled_from([PERSON, BOT, None]), st.integers(0, 200_000)),
    max_size=25,
)


def build(items):
    entries, ts = [], T0
    for n, (payload, author, gap) in enumerate(items):
        ts += gap
        entries.append(
            E.Entry(
                id=f"m{n}" if n < len(IDS) else f"x{n}", ts=ts, payload=payload, authorId=author
            )
        )
    return entries


@settings(max_examples=200)
@given(logs, st.integers(0, 20 * 60 * 1000))
def test_incremental_and_whole_folds_agree_on_every_prefix(items, later):
    entries = build(items)
    fold = NowFold(bots=BOTS)
    for n, entry in enumerate(entries, 1):
        fold.apply(entry)
        at = entry.ts + later
        assert fold.view(at) == reduce_thread_now(entries[:n], now_ms=at, bots=BOTS)
        assert derive_thread_status(fold.view(at)).state in {
            "blocked",
            "working",
            "error",
            "done",
            "idle",
        }


@settings(max_examples=100)
@given(logs)
def test_an_entry_met_twice_changes_nothing(items):
    entries = build(items)
    doubled = [e for entry in entries for e in (entry, entry)]
    at = (entries[-1].ts if entries else T0) + 1
    assert reduce_thread_now(doubled, now_ms=at, bots=BOTS) == reduce_thread_now(
        entries, now_ms=at, bots=BOTS
    )


@pytest.mark.parametrize("state", ["finished", "failed", "dead"])
def test_an_ended_run_never_reads_working(state):
    log = Log()
    log.add(E.ThreadRunState(runId="r1", state=state))
    assert status(log).state != "working"


def usage(total, cost=0.001):
    return {"input": total - 1, "output": 1, "totalTokens": total, "cost": {"total": cost}}


def test_spend_counts_live_and_the_final_figure_never_lowers_it():
    log = Log()
    m = log.chat()
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.add(E.PiAssistant(dispatchId="d1", message={"role": "assistant", "usage": usage(10)}))
    log.add(E.PiAssistant(dispatchId="d1", message={"role": "assistant", "usage": usage(5)}))
    assert view(log).spend.totalTokens == 15  # during the reply
    log.add(E.DispatchFinished(dispatchId="d1", spend=E.Spend(totalTokens=5)))
    assert view(log).spend.totalTokens == 15


def test_malformed_pi_messages_are_skipped():
    log = Log()
    m = log.chat()
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    for message in ({"content": "text", "usage": "lots"}, {"content": [1, None]}, {"usage": []}):
        log.add(E.PiAssistant(dispatchId="d1", message=message))
    log.add(E.PiToolResult(dispatchId="d1", message={"toolCallId": ["x"]}))
    now = view(log)
    assert now.reply.dispatchId == "d1" and now.spend.totalTokens == 0


def test_a_run_on_its_own_thread_shows_phase_round_and_spend():
    log = Log()
    log.add(E.ThreadRunState(runId="r1", state="running", agentId=BOT))
    log.add(E.DispatchPhase(dispatchId="r1", phase="tool", round=2, tool="bash"))
    log.add(E.PiAssistant(dispatchId="r1", message={"role": "assistant", "usage": usage(7)}))
    now = reduce_thread_now(log.entries, now_ms=log.last_ts + 1, bots=BOTS, run=True)
    (run,) = now.runs
    assert (run.phase, run.round, run.spend.totalTokens) == ("tool", 2, 7)
    assert now.spend.totalTokens == 7
    s = derive_thread_status(now)
    assert s.state == "working" and "tool (round 2)" in s.message


def test_a_failure_ends_only_its_own_reply():
    log = Log()
    m = log.chat()
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.add(E.DispatchFailed(stage="wake", error="down"))  # no dispatch id
    log.add(E.DispatchFailed(stage="model", error="x", dispatchId="d0"))  # another reply's
    now = view(log)
    assert now.reply.dispatchId == "d1" and now.failedAttempts == 0
    assert [(b.agentId, b.state) for b in now.bots] == [(BOT, "working")]


@settings(max_examples=200)
@given(logs, st.integers(0, 25))
def test_a_fold_resumed_from_a_view_and_its_state_goes_on_like_the_whole_fold(items, split):
    entries = build(items)
    at = (entries[-1].ts if entries else T0) + 1
    head = NowFold(bots=BOTS)
    for entry in entries[:split]:
        head.apply(entry)
    state = msgspec.json.decode(msgspec.json.encode(head.state()), type=FoldState)
    resumed = NowFold.resume(head.view(at), state, bots=BOTS)
    for entry in entries[split:]:
        resumed.apply(entry)
    assert resumed.view(at) == reduce_thread_now(entries, now_ms=at, bots=BOTS)
