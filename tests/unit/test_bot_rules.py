"""When the compose box says a bot answers every message: the director's conversation rule
(``dispatch.decide.Speakers.conversation_bot``) as the viewer's next message would meet it."""

from threads.bot_rules import BotRules

BOTS = {"ag_bot": "helper", "ag_two": "scribe"}


def rules(people=(), bots=(), everything=()):
    return BotRules(list(everything), BOTS, list(people), list(bots))


def test_the_only_person_with_one_bot_is_told():
    assert rules(["ag_me"], ["ag_bot"]).solo_bot("ag_me") == "helper"


def test_someone_who_has_not_written_yet_would_make_it_two_people():
    assert rules(["ag_other"], ["ag_bot"]).solo_bot("ag_me") is None


def test_no_bot_or_two_bots_or_a_retired_bot_is_no_conversation():
    assert rules(["ag_me"], []).solo_bot("ag_me") is None
    assert rules(["ag_me"], ["ag_bot", "ag_two"]).solo_bot("ag_me") is None
    assert rules(["ag_me"], ["ag_gone"]).solo_bot("ag_me") is None


def test_a_bot_that_answers_everything_is_said_once():
    assert rules(["ag_me"], ["ag_bot"], everything=["helper"]).solo_bot("ag_me") is None
