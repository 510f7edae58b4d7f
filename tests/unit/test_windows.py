"""History windows as pure code: how appends of any size fill windows, and how a window's
page fold treats replies that cross its edges."""

from hypothesis import given
from hypothesis import strategies as st

from threads import entries as E
from threads.entry_views import page_items
from threads.windows import WINDOW_CHATS, WINDOW_ENTRIES, Tally


def entry(i: int, chat: bool) -> E.Entry:
    payload = E.Chat(text=f"m{i}") if chat else E.DirectorOutcome(upTo=f"e{i}", picked=[])
    return E.Entry(id=f"e{i}", ts=i, payload=payload, authorId="ag_person")


batches = st.lists(st.lists(st.booleans(), min_size=1, max_size=40), max_size=60)


@given(batches)
def test_windows_split_the_log_in_order_at_append_edges_once_full(shape):
    """Fed append by append (as the seam and the rebuild do), windows close only at the end
    of an append, each closed window is full and holds less than a window plus an append."""
    log, i = [], 0
    for sizes in shape:
        log.append([entry(i + k, chat) for k, chat in enumerate(sizes)])
        i += len(sizes)
    windows, current, tally = [], [], Tally()
    for batch in log:
        current += batch
        tally.add(batch)
        if tally.full:
            windows.append(current)
            current, tally = [], Tally()
    flat = [e for w in windows for e in w] + current
    assert [e.id for e in flat] == [f"e{n}" for n in range(i)]
    for window in windows:
        chats = sum(isinstance(e.payload, E.Chat) for e in window)
        assert chats >= WINDOW_CHATS or len(window) >= WINDOW_ENTRIES
        assert len(window) < WINDOW_ENTRIES + 40
    assert not Tally(sum(isinstance(e.payload, E.Chat) for e in current), len(current)).full


def reply_log():
    bot = "ag_bot"
    text = {"content": [{"type": "text", "text": "thinking"}]}
    return [
        E.Entry(
            id="s",
            ts=1,
            payload=E.DispatchStarted(dispatchId="d", agentId=bot, entryIds=[]),
            authorId=bot,
        ),
        E.Entry(id="p", ts=2, payload=E.PiAssistant(dispatchId="d", message=text), authorId=bot),
        E.Entry(id="a", ts=3, payload=E.Chat(text="answer"), authorId=bot),
        E.Entry(
            id="f",
            ts=4,
            payload=E.DispatchFinished(dispatchId="d", spend=E.Spend(totalTokens=9)),
            authorId=bot,
        ),
    ]


def test_a_reply_cut_by_a_window_edge_is_completed_on_its_side_and_not_repeated():
    log = reply_log()
    before = page_items(log[:1], lookahead=log[1:])
    (reply,) = before
    assert [t.id for t in reply.transcript] == ["p"] and reply.spend.totalTokens == 9
    after = page_items(log[1:], partial=True)
    assert [i.entry.id for i in after] == ["a"]  # the answer; the transcript stayed above
    whole = page_items(log)
    assert [i.entry.id for i in whole] == ["a"] and whole[0].reply.spend.totalTokens == 9


def test_chat_tombstoned_further_down_is_left_out_of_a_window():
    log = [entry(0, True), entry(1, True)]
    assert [i.entry.id for i in page_items(log, gone={"e0"})] == ["e1"]
