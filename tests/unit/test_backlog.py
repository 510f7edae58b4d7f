"""A backlog of waiting messages (issue 28): the fold, the status and a director pass
stay bounded however many messages wait, and settle the backlog instead of carrying it."""

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatch.decide import BotInfo, Speakers
from dispatch.director import PASS_WINDOW, plan_pass
from threads import entries as E
from threads import now as now_module
from threads.entries import MAX_ENTRY_BYTES, encode_entry
from threads.narration import Names, narration
from threads.now import PENDING_KEPT, SEEN_KEPT, WAITING_SHOWN, FoldState, NowFold
from threads.status import derive_thread_status

PERSON, BOT = "ag_person", "ag_bot"
HELPER = BotInfo(BOT, "helper", True)
T0 = 1_700_000_000_000


def backlog(n: int, *, id_len: int = 12) -> list[E.Entry]:
    """``n`` unsettled chats from a person, with ids as long as ``id_len`` allows."""
    return [
        E.Entry(id=f"{i:0{id_len}d}", ts=T0 + i, payload=E.Chat(text=f"note {i}"), authorId=PERSON)
        for i in range(n)
    ]


def entry(payload, n: int, author=None) -> E.Entry:
    return E.Entry(id=f"s{n}", ts=T0 + 10**6 + n, payload=payload, authorId=author)


def folded(entries) -> NowFold:
    fold = NowFold(bots={BOT})
    for e in entries:
        fold.apply(e)
    return fold


def test_the_fold_and_its_state_stay_bounded_over_a_backlog():
    fold = folded(backlog(20_000))
    now = fold.view(T0 + 20_001)
    assert now.waitingCount == 20_000
    assert len(now.waiting) == WAITING_SHOWN and now.waiting[-1] == f"{19_999:012d}"
    state = fold.state()
    assert len(state.pending) == PENDING_KEPT and state.older == 20_000 - PENDING_KEPT
    assert len(state.seen) <= 2 * (SEEN_KEPT + PENDING_KEPT)
    assert len(msgspec.json.encode(state)) < 64 * 1024


def test_the_status_of_a_backlog_says_what_happens_in_a_bounded_line():
    status = derive_thread_status(folded(backlog(20_003)).view(T0 + 20_004))
    assert status.state == "idle"  # waiting for the director's pass: no bot picked yet
    assert status.message == "Deciding who answers the newest 100 of 20,003 waiting messages."
    one = derive_thread_status(folded(backlog(1)).view(T0 + 2))
    assert one.message == "Deciding who answers 1 waiting message."


def test_an_outcome_up_to_the_newest_settles_the_messages_the_fold_only_counted():
    entries = backlog(2_000)
    entries.append(entry(E.DirectorOutcome(upTo=entries[-1].id, picked=[]), 0))
    now = folded(entries).view(T0 + 10**7)
    assert now.waitingCount == 0 and now.waiting == []
    assert derive_thread_status(now).state == "idle"


def test_a_pass_over_a_backlog_settles_the_old_part_and_decides_over_the_newest():
    entries = backlog(20_000, id_len=128)  # the longest ids an entry may carry
    mention = E.Entry(
        id="m" * 128, ts=T0 + 20_000, payload=E.Chat(text="@helper round 1"), authorId=PERSON
    )
    entries.append(mention)
    plan = plan_pass(entries, [HELPER], Speakers())
    window = [e.id for e in entries[-PASS_WINDOW:]]
    assert plan.expired.tooOld == 20_001 - PASS_WINDOW
    assert plan.expired.upTo == entries[-PASS_WINDOW - 1].id and plan.expired.picked == []
    assert plan.decided.entryIds == window and plan.decided.upTo == mention.id
    assert plan.start == (BOT, window)
    started = E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=plan.start[1])
    written = [plan.expired, plan.decided, started]
    for n, payload in enumerate(written):
        assert len(encode_entry(entry(payload, n))) < MAX_ENTRY_BYTES
    # The reply answers; the next pass ends it and nothing waits any more.
    entries += [entry(p, n) for n, p in enumerate(written)]
    entries.append(entry(E.Chat(text="answered"), 10, author=BOT))
    entries.append(entry(E.DispatchFinished(dispatchId="d1"), 11, author=BOT))
    after = plan_pass(entries, [HELPER], Speakers())
    assert after.expired is None and after.decided is None and after.start is None
    entries.append(entry(after.outcome, 12))
    now = folded(entries).view(T0 + 10**7)
    assert now.waitingCount == 0 and now.owed == [] and now.reply is None


def test_a_too_old_outcome_settles_only_the_backlog_and_keeps_what_is_owed():
    entries = backlog(5)
    entries.append(entry(E.DirectorDecided(picked=[BOT], upTo="000000000004"), 0))
    entries.append(entry(E.DirectorOutcome(upTo="000000000002", tooOld=3), 1))
    now = folded(entries).view(T0 + 10**7)
    assert now.owed == [BOT] and now.waiting == ["000000000003", "000000000004"]
    assert now.silence is None
    line = narration(entries[-1].payload, Names())
    assert line == "3 older messages were not answered: too old."


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(1, 30), st.lists(st.integers(0, 399), max_size=5))
def test_however_a_backlog_is_cut_the_pass_covers_every_message_once(n, window, mentioned):
    entries = [
        E.Entry(
            id=f"c{i}",
            ts=T0 + i,
            payload=E.Chat(text="@helper hi" if i in mentioned else "hi"),
            authorId=PERSON,
        )
        for i in range(n)
    ]
    plan = plan_pass(entries, [HELPER], Speakers(), window=window)
    expired = plan.expired.tooOld if plan.expired else 0
    assert expired == max(0, n - window)
    if plan.decided:
        assert plan.decided.entryIds == [e.id for e in entries[-min(n, window) :]]
    else:
        assert plan.outcome.upTo == entries[-1].id
    assert any(i >= n - window for i in mentioned if i < n) == (plan.start is not None)


# The fold resumed from its bounded state goes on exactly like the whole fold, also when
# messages fall out of what it keeps (tiny bounds make that happen in short logs).

IDS = [f"m{i}" for i in range(12)]
small_payloads = st.one_of(
    st.builds(E.Chat, text=st.just("hi")),
    st.builds(E.Chat, text=st.just("hi")),
    st.builds(E.EntryDeleted, entryId=st.sampled_from(IDS)),
    st.builds(E.DirectorDecided, picked=st.just([BOT]), upTo=st.sampled_from(IDS)),
    st.builds(
        E.DirectorOutcome,
        upTo=st.sampled_from(IDS + ["zz"]),
        picked=st.just([]),
        tooOld=st.sampled_from([0, 0, 2]),
    ),
    st.builds(
        E.DispatchStarted,
        dispatchId=st.just("d1"),
        agentId=st.just(BOT),
        entryIds=st.lists(st.sampled_from(IDS), max_size=2),
    ),
    st.builds(E.DispatchSteered, dispatchId=st.just("d1"), entryIds=st.lists(st.sampled_from(IDS))),
    st.builds(E.DispatchFinished, dispatchId=st.just("d1")),
)


@pytest.fixture
def tiny_bounds():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(now_module, "WAITING_SHOWN", 2)
        patch.setattr(now_module, "PENDING_KEPT", 3)
        patch.setattr(now_module, "SEEN_KEPT", 1)
        yield


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(small_payloads, max_size=40), st.integers(0, 40))
def test_a_bounded_fold_resumes_like_the_whole_fold(tiny_bounds, items, split):
    entries = [
        E.Entry(id=IDS[n] if n < len(IDS) else f"x{n}", ts=T0 + n, payload=p, authorId=PERSON)
        for n, p in enumerate(items)
    ]
    head = folded(entries[:split])
    state = msgspec.json.decode(msgspec.json.encode(head.state()), type=FoldState)
    at = T0 + 100
    resumed = NowFold.resume(head.view(at), state, bots={BOT})
    for e in entries[split:]:
        resumed.apply(e)
    whole = folded(entries)
    assert resumed.view(at) == whole.view(at)
    assert len(whole.view(at).waiting) <= 2 and len(whole.state().pending) <= 3


def test_the_directors_cached_tail_stays_under_its_bytes_and_keeps_the_outcome():
    from dispatch.director import TAIL_BYTES, _bounded_tail

    big = [E.to_builtins(entry(E.Chat(text="x" * 20_000), n, author=PERSON)) for n in range(49)]
    outcome = E.to_builtins(entry(E.DirectorOutcome(upTo="s48"), 49))
    tail = _bounded_tail([*big, outcome])
    assert tail[-1] == outcome and 1 < len(tail) < 50
    assert len(msgspec.json.encode(tail)) <= TAIL_BYTES


def test_a_prompt_gives_the_newest_messages_that_fit():
    from dispatch.conversation import PROMPT_CHARS, PROMPT_MESSAGES, newest_within

    many = backlog(20_000)
    shown = newest_within(many)
    assert shown == many[-PROMPT_MESSAGES:]
    long = [entry(E.Chat(text="y" * 19_000), n, author=PERSON) for n in range(10)]
    shown = newest_within(long)
    assert shown == long[-3:] and sum(len(m.payload.text) for m in shown) <= PROMPT_CHARS
    huge = [entry(E.Chat(text="z" * 20_000), 0, author=PERSON)]
    assert newest_within(huge) == huge  # the newest always goes
