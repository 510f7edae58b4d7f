"""Deletion projection: tombstones hide chat from people and bots; raw reads keep both."""

from hypothesis import given
from hypothesis import strategies as st

from threads.entries import Chat, DispatchStarted, Entry, EntryDeleted, PiChunk
from threads.projection import chat_projection, dispatch_history, visible_entries


def chat(id, text="x", author="ag_p"):
    return Entry(id=id, ts=1, payload=Chat(text=text), authorId=author)


def tomb(target, id=None):
    return Entry(id=id or f"del-{target}", ts=2, payload=EntryDeleted(entryId=target))


def test_a_tombstone_removes_the_chat_it_names():
    log = [chat("a"), chat("b"), tomb("a")]
    assert [e.id for e in chat_projection(log)] == ["b"]
    assert [e.id for e in dispatch_history(log)] == ["b"]
    assert [e.id for e in log] == ["a", "b", "del-a"]  # the raw log keeps both


def test_deleting_twice_is_harmless():
    log = [chat("a"), chat("b"), tomb("a", "t1"), tomb("a", "t2")]
    assert [e.id for e in chat_projection(log)] == ["b"]


def test_a_tombstone_never_hides_what_a_reply_did():
    started = Entry(
        id="s", ts=3, payload=DispatchStarted(dispatchId="d", agentId="b", entryIds=["a"])
    )
    reply = chat("r", author="ag_bot")
    log = [chat("a"), started, reply, tomb("a")]
    assert [e.id for e in visible_entries(log)] == ["s", "r", "del-a"]


def test_legacy_typing_is_never_visible():
    log = [chat("a"), Entry(id="c", ts=1, payload=PiChunk())]
    assert [e.id for e in visible_entries(log)] == ["a"]


def test_the_first_entry_of_an_id_wins():
    log = [chat("a", "first"), chat("a", "second")]
    assert [e.payload.text for e in chat_projection(log)] == ["first"]


@given(st.lists(st.sampled_from("abcde"), max_size=12), st.sets(st.sampled_from("abcde")))
def test_projection_is_the_chat_minus_tombstones_wherever_they_fall(ids, deleted):
    log = [chat(i) for i in ids] + [tomb(d) for d in deleted]
    shuffled = sorted(log, key=lambda e: hash((e.id, e.ts)))
    kept = {e.id for e in chat_projection(shuffled)}
    assert kept == set(ids) - deleted


# -- edits ------------------------------------------------------------------------------

from threads.entries import EditedChat, EntryEdited, encode_entry  # noqa: E402
from threads.projection import latest_texts  # noqa: E402


def edited(target, text, id, author="ag_p"):
    return Entry(id=id, ts=3, payload=EntryEdited(entryId=target, text=text), authorId=author)


def test_an_edit_shows_the_latest_text_and_the_log_keeps_every_version():
    log = [chat("a", "one"), edited("a", "two", "e1"), edited("a", "three", "e2")]
    (shown,) = chat_projection(log)
    assert shown.payload.text == "three" and isinstance(shown.payload, EditedChat)
    assert [e.id for e in visible_entries(log)] == ["a"]
    assert [getattr(e.payload, "text", None) for e in log] == ["one", "two", "three"]
    # A projection's chat encodes as plain chat: nothing new reaches a writer or a reader.
    assert b'"edited"' not in encode_entry(shown)


def test_an_edit_by_someone_else_or_before_its_chat_changes_nothing():
    log = [edited("a", "early", "e0"), chat("a", "one"), edited("a", "theirs", "e1", "ag_x")]
    assert [e.payload.text for e in chat_projection(log)] == ["one"]


def test_an_edit_never_brings_back_a_deleted_message():
    log = [chat("a"), tomb("a"), edited("a", "back?", "e1")]
    assert chat_projection(log) == []
    assert [e.id for e in visible_entries(log)] == ["del-a"]


events = st.lists(
    st.tuples(st.sampled_from(["edit", "tomb"]), st.sampled_from("abc"), st.integers(0, 9)),
    max_size=14,
)


@given(events, st.randoms(use_true_random=False))
def test_the_fold_over_any_ordering_of_edits_and_tombstones(evs, rnd):
    """Whatever order edits and tombstones land in after their chat: a tombstoned chat is
    gone, a live one says the text of its author's last edit in log order, else its own."""
    tail = [
        edited(t, f"{t}{n}", f"e{i}") if kind == "edit" else tomb(t, f"t{i}")
        for i, (kind, t, n) in enumerate(evs)
    ]
    rnd.shuffle(tail)
    log = [chat(i, f"{i}-orig") for i in "abc"] + tail
    gone = {e.payload.entryId for e in tail if isinstance(e.payload, EntryDeleted)}
    expect = {i: f"{i}-orig" for i in "abc" if i not in gone}
    for e in tail:
        if isinstance(e.payload, EntryEdited) and e.payload.entryId in expect:
            expect[e.payload.entryId] = e.payload.text
    assert {e.id: e.payload.text for e in chat_projection(log)} == expect
    shown = visible_entries(log)
    assert {e.id: e.payload.text for e in shown if isinstance(e.payload, Chat)} == expect
    assert set(latest_texts(log)) == {
        e.payload.entryId for e in tail if e.type != "signal.entry.deleted"
    }
