"""A bot's next turn reads the latest text of an edited message, and an edit undoes nothing."""

from dispatch.conversation import seen_by
from threads.entries import Chat, DispatchStarted, Entry, EntryEdited
from threads.projection import dispatch_history


def chat(id, text, author="ag_p"):
    return Entry(id=id, ts=1, payload=Chat(text=text), authorId=author)


def started(id, entry_ids):
    payload = DispatchStarted(dispatchId=f"d-{id}", agentId="ag_bot", entryIds=entry_ids)
    return Entry(id=id, ts=2, payload=payload)


def edit(id, target, text, author="ag_p"):
    return Entry(id=id, ts=3, payload=EntryEdited(entryId=target, text=text), authorId=author)


def test_an_edit_of_what_the_bot_saw_reseeds_its_session_with_the_latest_text():
    log = [chat("a", "deploy friday"), started("s1", ["a"]), chat("r", "ok", "ag_bot")]
    seen, generation = seen_by("ag_bot", log)
    assert "a" in seen and generation == 0
    log += [edit("e1", "a", "deploy monday")]
    _, after = seen_by("ag_bot", log)
    assert after == 1  # a new session generation: seeded from the history below
    history = dispatch_history(log)
    assert [(m.id, m.payload.text) for m in history] == [("a", "deploy monday"), ("r", "ok")]


def test_an_edit_of_what_the_bot_never_saw_keeps_its_session():
    log = [chat("a", "x"), started("s1", ["a"]), chat("b", "later"), edit("e1", "b", "later!")]
    assert seen_by("ag_bot", log)[1] == 0
