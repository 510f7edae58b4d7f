"""A bot's next turn reads the latest text of an edited message, and an edit undoes nothing."""

from dispatch.conversation import unseen_since
from threads.entries import Chat, DispatchStarted, DispatchSteered, Entry, EntryDeleted, EntryEdited
from threads.projection import dispatch_history


def chat(id, text, author="ag_p"):
    return Entry(id=id, ts=1, payload=Chat(text=text), authorId=author)


def started(id, entry_ids):
    payload = DispatchStarted(dispatchId=f"d-{id}", agentId="ag_bot", entryIds=entry_ids)
    return Entry(id=id, ts=2, payload=payload)


def edit(id, target, text, author="ag_p"):
    return Entry(id=id, ts=3, payload=EntryEdited(entryId=target, text=text), authorId=author)


def test_an_edit_of_what_the_session_holds_reseeds_it_with_the_latest_text():
    # The session's mark is past "a" and the bot's answer: after it, only the edit.
    assert unseen_since("ag_bot", [edit("e1", "a", "deploy monday")]).reseed
    log = [chat("a", "deploy friday"), started("s1", ["a"]), chat("r", "ok", "ag_bot")]
    log += [edit("e1", "a", "deploy monday")]
    history = dispatch_history(log)
    assert [(m.id, m.payload.text) for m in history] == [("a", "deploy monday"), ("r", "ok")]


def test_an_edit_of_what_the_bot_never_saw_keeps_its_session_and_shows_the_latest_text():
    since = unseen_since("ag_bot", [chat("b", "later"), edit("e1", "b", "later!")])
    assert not since.reseed
    assert [(m.id, m.payload.text) for m in since.chat] == [("b", "later!")]


def test_a_deletion_of_a_message_the_bot_steered_in_reseeds_its_session():
    steered = Entry(
        id="st",
        ts=2,
        payload=DispatchSteered(dispatchId="d1", entryIds=["b"]),
        authorId="ag_bot",
    )
    gone = Entry(id="x", ts=3, payload=EntryDeleted(entryId="b"), authorId="ag_p")
    since = unseen_since("ag_bot", [chat("b", "secret"), steered, gone])
    assert since.reseed and since.chat == []
    # …and one it never saw is simply left out.
    since = unseen_since("ag_bot", [chat("b", "secret"), chat("c", "hi"), gone])
    assert not since.reseed and [m.id for m in since.chat] == ["c"]


def test_the_bots_own_words_and_what_it_steered_in_are_not_handed_again():
    steered = Entry(
        id="st", ts=2, payload=DispatchSteered(dispatchId="d1", entryIds=["b"]), authorId="ag_bot"
    )
    log = [chat("b", "mid-reply"), steered, chat("r", "answer", "ag_bot"), chat("c", "next")]
    assert [m.id for m in unseen_since("ag_bot", log).chat] == ["c"]
