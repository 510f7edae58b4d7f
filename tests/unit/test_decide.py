"""The director's decision: mentions, involvement, conversations, blocked and retired bots."""

from dispatch.decide import (
    BOT_CHAIN,
    EVERYTHING,
    MAX_BOT_CHAIN,
    BotInfo,
    Speakers,
    decide,
    mentions,
)
from threads.entries import Chat, Entry

HELPER = BotInfo("ag_helper", "helper", True)
CODER = BotInfo("ag_coder", "coder", True)
GHOST = BotInfo("ag_ghost", "ghost", False)
GONE = BotInfo("ag_gone", "gone", True, active=False)
BOTS = [HELPER, CODER, GHOST, GONE]
ALICE, BOB = "ag_alice", "ag_bob"


def chat(text, author=ALICE, id="m1"):
    return Entry(id=id, ts=1, payload=Chat(text=text), authorId=author)


def spoke(people=(), bots=()):
    return Speakers(frozenset(people), frozenset(bots))


def test_mentions_are_handles_in_order_without_repeats():
    assert mentions("@Helper and @coder, then @helper again") == ["helper", "coder"]
    assert mentions("mail me at me@helper.dev") == []


def test_a_mentioned_bot_owes_a_reply():
    assert decide([chat("@helper hi")], BOTS).picked == ["ag_helper"]


def test_two_mentions_pick_both_in_order():
    assert decide([chat("@coder and @helper")], BOTS).picked == ["ag_coder", "ag_helper"]


def test_ordinary_chat_picks_nobody_and_gives_no_reason():
    d = decide([chat("lunch at noon?")], BOTS, speakers=spoke({ALICE, BOB}, {"ag_helper"}))
    assert (d.picked, d.reason, d.blocked) == ([], None, False)


def test_a_bot_that_spoke_does_not_answer_everyone_after():
    # One bot took part, but two people talk: unmentioned messages are theirs.
    d = decide(
        [chat("please keep this message", BOB)], BOTS, speakers=spoke({ALICE, BOB}, {"ag_helper"})
    )
    assert d.picked == []


def test_a_one_person_one_bot_conversation_goes_on_without_mentions():
    d = decide([chat("and then?")], BOTS, speakers=spoke({ALICE}, {"ag_helper"}))
    assert d.picked == ["ag_helper"]


def test_a_conversation_ends_when_a_second_bot_or_person_speaks():
    assert (
        decide([chat("and then?")], BOTS, speakers=spoke({ALICE}, {"ag_helper", "ag_coder"})).picked
        == []
    )
    assert (
        decide([chat("and then?")], BOTS, speakers=spoke({ALICE, BOB}, {"ag_helper"})).picked == []
    )


def test_a_mention_directs_the_message_even_in_a_conversation():
    d = decide([chat("@coder your turn")], BOTS, speakers=spoke({ALICE}, {"ag_helper"}))
    assert d.picked == ["ag_coder"]


def test_an_everything_bot_answers_every_persons_message():
    chatty = BotInfo("ag_chatty", "chatty", True, EVERYTHING)
    d = decide([chat("lunch at noon?")], [*BOTS, chatty], speakers=spoke({ALICE, BOB}))
    assert d.picked == ["ag_chatty"]
    # …but not bots' messages, and not a message that names someone else.
    assert decide([chat("done", "ag_helper")], [*BOTS, chatty]).picked == []
    assert decide([chat("@coder only you")], [*BOTS, chatty]).picked == ["ag_coder"]


def test_an_unconfigured_everything_bot_stays_out_quietly():
    idle = BotInfo("ag_idle", "idle", False, EVERYTHING)
    d = decide([chat("lunch?")], [*BOTS, idle])
    assert (d.picked, d.reason, d.blocked) == ([], None, False)


def test_a_bot_never_answers_itself_and_a_plain_bot_answer_needs_no_reason():
    d = decide([chat("@helper said so", author="ag_helper")], BOTS, bot_chain=1)
    assert (d.picked, d.reason) == ([], None)


def test_a_bot_in_conversation_does_not_answer_its_own_message():
    d = decide(
        [chat("here you go", author="ag_helper")], BOTS, speakers=spoke({ALICE}, {"ag_helper"})
    )
    assert d.picked == []


def test_a_bot_can_ask_another_bot():
    d = decide([chat("@coder please", author="ag_helper")], BOTS, bot_chain=1)
    assert d.picked == ["ag_coder"]


def test_an_unconfigured_bot_blocks():
    d = decide([chat("@ghost hello")], BOTS)
    assert d.blocked and "@ghost" in d.reason and d.picked == []


def test_an_unconfigured_conversation_bot_blocks():
    d = decide([chat("still there?")], BOTS, speakers=spoke({ALICE}, {"ag_ghost"}))
    assert d.blocked and "@ghost" in d.reason


def test_a_mention_of_a_retired_bot_says_so_without_blocking():
    d = decide([chat("@gone are you there?")], BOTS)
    assert (d.picked, d.blocked) == ([], False) and "@gone" in d.reason


def test_a_message_already_taken_in_is_not_answered_again_by_the_same_bot():
    message = chat("@helper and @coder", id="m9")
    d = decide([message], BOTS, answered={"m9": {"ag_helper"}})
    assert d.picked == ["ag_coder"]
    assert decide([message], BOTS, answered={"m9": {"ag_helper", "ag_coder"}}).picked == []


def test_bots_stop_talking_among_themselves_after_a_while():
    message = chat("@coder again", author="ag_helper")
    d = decide([message], BOTS, bot_chain=MAX_BOT_CHAIN)
    assert (d.picked, d.reason) == ([], BOT_CHAIN)
    assert decide([chat("@coder go on")], BOTS).picked == ["ag_coder"]


def test_a_reason_stays_one_short_line_however_many_bots_a_message_names():
    retired = [
        BotInfo(f"ag_r{i}", f"retired-bot-number-{i:03d}", True, active=False) for i in range(90)
    ]
    text = " ".join(f"@{b.handle}" for b in retired)
    d = decide([chat(text)], retired)
    assert d.reason.endswith("and 85 more is no longer in this house.")
    assert len(d.reason) < 300
