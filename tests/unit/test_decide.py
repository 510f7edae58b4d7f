"""The director's decision: mentions, one-bot conversations, blocked bots, bot chains."""

from dispatch.decide import BOT_CHAIN, MAX_BOT_CHAIN, NO_MENTION, BotInfo, decide, mentions
from threads.entries import Chat, Entry

HELPER = BotInfo("ag_helper", "helper", True)
CODER = BotInfo("ag_coder", "coder", True)
GHOST = BotInfo("ag_ghost", "ghost", False)
BOTS = [HELPER, CODER, GHOST]


def chat(text, author="ag_person", id="m1"):
    return Entry(id=id, ts=1, payload=Chat(text=text), authorId=author)


def test_mentions_are_handles_in_order_without_repeats():
    assert mentions("@Helper and @coder, then @helper again") == ["helper", "coder"]
    assert mentions("mail me at me@helper.dev") == []


def test_a_mentioned_bot_owes_a_reply():
    assert decide([chat("@helper hi")], BOTS, thread_bots=set(), bot_chain=0).picked == [
        "ag_helper"
    ]


def test_two_mentions_pick_both_in_order():
    d = decide([chat("@coder and @helper")], BOTS, thread_bots=set(), bot_chain=0)
    assert d.picked == ["ag_coder", "ag_helper"]


def test_no_mention_in_a_one_bot_conversation_goes_to_that_bot():
    d = decide([chat("and then?")], BOTS, thread_bots={"ag_helper"}, bot_chain=0)
    assert d.picked == ["ag_helper"]


def test_no_mention_with_several_bots_picks_nobody_and_says_why():
    d = decide([chat("and then?")], BOTS, thread_bots={"ag_helper", "ag_coder"}, bot_chain=0)
    assert (d.picked, d.reason, d.blocked) == ([], NO_MENTION, False)


def test_a_bot_never_answers_itself_and_a_plain_bot_answer_needs_no_reason():
    d = decide(
        [chat("@helper said so", author="ag_helper")], BOTS, thread_bots={"ag_helper"}, bot_chain=1
    )
    assert (d.picked, d.reason) == ([], None)


def test_a_bot_can_ask_another_bot():
    d = decide(
        [chat("@coder please", author="ag_helper")], BOTS, thread_bots={"ag_helper"}, bot_chain=1
    )
    assert d.picked == ["ag_coder"]


def test_an_unconfigured_bot_blocks():
    d = decide([chat("@ghost hello")], BOTS, thread_bots=set(), bot_chain=0)
    assert d.blocked and "@ghost" in d.reason and d.picked == []


def test_bots_stop_talking_among_themselves_after_a_while():
    message = chat("@coder again", author="ag_helper")
    d = decide([message], BOTS, thread_bots=set(), bot_chain=MAX_BOT_CHAIN)
    assert (d.picked, d.reason) == ([], BOT_CHAIN)
    person = chat("@coder go on")
    assert decide([person], BOTS, thread_bots=set(), bot_chain=0).picked == ["ag_coder"]
