"""Reactions fold from the log: per chat, per emoji, who reacts now; tombstones drop them."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from threads.entries import Chat, Entry, EntryDeleted, EntryEdited, EntryReaction
from threads.projection import chat_projection
from threads.reactions import fold, is_emoji


def chat(id, text="x", author="ag_p"):
    return Entry(id=id, ts=1, payload=Chat(text=text), authorId=author)


def react(target, emoji, who, on=True, id=None):
    payload = EntryReaction(entryId=target, emoji=emoji, on=on)
    return Entry(id=id or f"r-{target}-{who}-{emoji}-{on}", ts=2, payload=payload, authorId=who)


@pytest.mark.parametrize("emoji", ["👍", "❤️", "🎉", "👍🏽", "👨‍👩‍👧", "🇫🇷", "1️⃣", "✅"])
def test_one_emoji_grapheme_is_an_emoji(emoji):
    assert is_emoji(emoji)


@pytest.mark.parametrize("emoji", ["", "a", "ok", "👍👍", "👍 ", ":+1:", "<b>", "x" * 40, "\u200d"])
def test_anything_else_is_not(emoji):
    assert not is_emoji(emoji)


def test_counts_and_who_in_the_order_they_reacted():
    log = [chat("a"), react("a", "👍", "ag_1"), react("a", "🎉", "ag_2"), react("a", "👍", "ag_2")]
    assert fold(log) == {"a": {"👍": ["ag_1", "ag_2"], "🎉": ["ag_2"]}}


def test_taking_a_reaction_back_and_repeating_one_change_only_what_they_say():
    log = [chat("a"), react("a", "👍", "ag_1"), react("a", "👍", "ag_1", id="again")]
    log += [react("a", "👍", "ag_1", on=False), react("a", "👀", "ag_2", on=False)]
    assert fold(log) == {}


def test_a_deleted_message_drops_its_reactions():
    log = [chat("a"), chat("b"), react("a", "👍", "ag_1"), react("b", "👍", "ag_1")]
    log.append(Entry(id="t", ts=3, payload=EntryDeleted(entryId="a")))
    assert fold(log) == {"b": {"👍": ["ag_1"]}}


def test_a_reaction_changes_no_text_and_an_edit_no_reaction():
    log = [chat("a", "one"), react("a", "👍", "ag_1")]
    log.append(Entry(id="e", ts=3, payload=EntryEdited(entryId="a", text="two"), authorId="ag_p"))
    assert fold(log) == {"a": {"👍": ["ag_1"]}}
    assert [m.payload.text for m in chat_projection(log)] == ["two"]


events = st.lists(
    st.tuples(
        st.sampled_from(["react", "unreact", "edit", "tomb"]),
        st.sampled_from("ab"),
        st.sampled_from(["ag_1", "ag_2"]),
        st.sampled_from(["👍", "🎉"]),
    ),
    max_size=16,
)


@given(events, st.randoms(use_true_random=False))
def test_the_fold_over_any_ordering_matches_a_plain_replay(evs, rnd):
    tail = []
    for i, (kind, target, who, emoji) in enumerate(evs):
        if kind == "tomb":
            tail.append(Entry(id=f"t{i}", ts=3, payload=EntryDeleted(entryId=target)))
        elif kind == "edit":
            payload = EntryEdited(entryId=target, text=f"v{i}")
            tail.append(Entry(id=f"e{i}", ts=3, payload=payload, authorId="ag_p"))
        else:
            tail.append(react(target, emoji, who, on=kind == "react", id=f"r{i}"))
    rnd.shuffle(tail)
    # The model: a set per (chat, emoji), replayed in log order; tombstoned chat has none.
    model: dict[str, dict[str, list[str]]] = {"a": {}, "b": {}}
    for e in tail:
        p = e.payload
        if isinstance(p, EntryReaction):
            who = model[p.entryId].setdefault(p.emoji, [])
            if p.on and e.authorId not in who:
                who.append(e.authorId)
            elif not p.on and e.authorId in who:
                who.remove(e.authorId)
            if not who:
                del model[p.entryId][p.emoji]
    gone = {e.payload.entryId for e in tail if isinstance(e.payload, EntryDeleted)}
    expected = {k: v for k, v in model.items() if v and k not in gone}
    assert fold([chat("a"), chat("b"), *tail]) == expected
