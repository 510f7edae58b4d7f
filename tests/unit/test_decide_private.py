"""The director in private threads and direct conversations: only the bots in them take
part, and a bot in a direct conversation answers every person's message there."""

from dispatch.decide import EVERYTHING, BotInfo, Speakers, decide
from threads.entries import Chat, Entry

ALICE, BOB = "ag_alice", "ag_bob"


def chat(text, author=ALICE, id="m1"):
    return Entry(id=id, ts=1, payload=Chat(text=text), authorId=author)


def test_a_bot_in_a_direct_conversation_answers_without_a_mention():
    pal = BotInfo("ag_pal", "pal", True, direct=True)
    other = BotInfo("ag_other", "other", True, reads=False)
    # Two people in the conversation with it: still every message, no conversation rule needed.
    spoke = Speakers(frozenset({ALICE, BOB}), frozenset({"ag_pal"}))
    assert decide([chat("what now?", BOB)], [pal, other], speakers=spoke).picked == ["ag_pal"]
    # Its own messages and other bots' never wake it.
    assert decide([chat("done", "ag_pal")], [pal, other]).picked == []


def test_a_mention_in_a_direct_conversation_directs_it():
    pal = BotInfo("ag_pal", "pal", True, direct=True)
    pix = BotInfo("ag_pix", "pix", True, direct=True)
    assert decide([chat("@pix only you")], [pal, pix]).picked == ["ag_pix"]
    assert decide([chat("both of you")], [pal, pix]).picked == ["ag_pal", "ag_pix"]


def test_an_unconfigured_bot_in_a_direct_conversation_blocks_with_a_reason():
    ghost = BotInfo("ag_ghost", "ghost", False, direct=True)
    d = decide([chat("hello")], [ghost])
    assert d.blocked and d.reason == "@ghost has no model configured."


def test_a_bot_outside_a_private_thread_is_never_picked_and_says_why():
    helper = BotInfo("ag_helper", "helper", True, reads=False)
    chatty = BotInfo("ag_chatty", "chatty", True, EVERYTHING, reads=False)
    d = decide([chat("@helper read this")], [helper, chatty])
    assert d.picked == []
    assert d.reason == "@helper isn't in this private thread, so it can't read it or answer."
    # An "everything" bot outside it stays out, silently: nobody asked it.
    d = decide([chat("plain talk")], [helper, chatty])
    assert (d.picked, d.reason) == ([], None)


def test_the_conversation_rule_needs_a_bot_in_the_thread():
    helper = BotInfo("ag_helper", "helper", True, reads=False)
    spoke = Speakers(frozenset({ALICE}), frozenset({"ag_helper"}))
    assert decide([chat("and then?")], [helper], speakers=spoke).picked == []


def test_a_member_bot_in_a_private_thread_answers_its_mentions():
    helper = BotInfo("ag_helper", "helper", True)
    outsider = BotInfo("ag_out", "out", True, reads=False)
    d = decide([chat("@helper and @out")], [helper, outsider])
    assert d.picked == ["ag_helper"]
