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
