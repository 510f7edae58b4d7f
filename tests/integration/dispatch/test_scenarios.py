"""Scenarios through the real director and Pi against the fake model: who answers, once,
never to itself; failures that end only their own reply; spend and phases as they happen."""

import json

import pytest

from houses.models import Agent
from tests.factories import make_bot
from tests.peers.fake_llm import MODEL, PROVIDER, Fail, Text, bash
from threads.entries import DispatchFailed
from threads.lifecycle import new_entry
from threads.recency import stream_writer

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]

SERVER_PATHS = ("node_modules", "/home/", "var/", "/work/", "/tmp/")


def of_type(live, kind, thread=None):
    return [e for e in live.entries(thread) if e.type == kind]


def started(live, thread=None):
    return [e.payload for e in of_type(live, "signal.dispatch.started", thread)]


def bot_chat(live, bot):
    return [e for e in live.entries() if e.type == "chat" and e.authorId == bot.id]


def post_as(live, user, text, thread=None):
    client = live.world.client_for(user)
    thread = thread or live.world.thread
    response = client.post(
        f"/api/threads/{thread.id}/entries",
        json.dumps({"payload": {"type": "chat", "text": text}}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()["entry"]["id"]


def delete(live, entry_id):
    client = live.world.client_for(live.world.member)
    response = client.delete(f"/api/threads/{live.world.thread.id}/entries/{entry_id}")
    assert response.status_code == 200, response.content


def requests_text(requests) -> str:
    return json.dumps([r["messages"] for r in requests])


# -- the bot never answers itself; deletion mid-reply --------------------------------


def test_a_deletion_mid_reply_never_feeds_the_bot_its_own_answer(live):
    """Issue 13, item 1: post, delete at once, post again while the first reply runs."""
    gate = live.fake.hold()
    live.fake.script(Text("echo: take this back"), Text("a fresh answer"))
    first = live.post("@helper take this back")
    gate.arrived.wait(30)
    delete(live, first)  # the model is already working on it
    second = live.post("@helper what now?")
    gate.release()
    live.settle()
    replies = started(live)
    assert [r.entryIds for r in replies] == [[first], [second]]
    later = live.fake.requests[1:]
    assert later and "take this back" not in requests_text(later)  # neither it nor the echo
    assert [c.payload.text for c in bot_chat(live, live.world.bot)] == [
        "echo: take this back",
        "a fresh answer",
    ]
    assert live.now()["now"]["waiting"] == []


def test_the_bots_own_messages_are_labelled_as_its_own_in_a_fresh_session(live):
    live.post("@helper first question")
    live.settle()
    secret = live.post("a note to delete")
    live.settle()
    delete(live, secret)  # a deletion of something it saw: the next reply starts a new session
    live.post("@helper second question")
    live.settle()
    prompt = live.fake.requests[-1]["messages"][-1]["content"]
    prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
    assert "[you, @helper]: Hello from fake LLM!" in prompt
    assert "a note to delete" not in prompt
    history, new = prompt.split("New messages for you:")
    assert "second question" in new and "first question" in history
    assert "Hello from fake LLM" not in new


# -- steering ------------------------------------------------------------------------


def test_a_steered_message_is_answered_once_by_the_reply_that_took_it_in(live):
    """Issue 13, item 2: a message steered in mid-reply gets no second reply.

    Pi reads a steer between turns; one that reaches it after its last turn is never read.
    Either way the message is answered once and the model sees it: by the reply that took
    it in (``steered``), or else by a reply of its own once the first ends."""
    gate = live.fake.hold()
    live.fake.script(bash("echo round-1"), Text("covered both"), Text("and the second"))
    first = live.post("@helper start on this")
    gate.arrived.wait(30)
    second = live.post("@helper and this too")  # mentions the same bot, arrives mid-reply
    gate.release()
    live.settle()
    steered = [s.payload.entryIds for s in of_type(live, "signal.dispatch.steered")]
    replies = [r.entryIds for r in started(live)]
    if steered:
        assert steered == [[second]] and replies == [[first]]
        assert len(bot_chat(live, live.world.bot)) == 1  # one reply answered both
    else:
        assert replies == [[first], [second]]
        assert len(bot_chat(live, live.world.bot)) == 2
    asked = [str(r["messages"]) for r in live.fake.requests[1:]]
    assert any("and this too" in text for text in asked)  # the model saw it, either way
    body = live.now()
    assert body["now"]["waiting"] == [] and body["status"]["state"] == "done"


# -- several bots ----------------------------------------------------------------------


def test_two_mentioned_bots_each_answer_once_never_their_own_words(live):
    coder = make_bot(live.world.house, "coder", provider=PROVIDER, model=MODEL)
    message = live.post("@helper and @coder, both of you")
    live.settle()
    replies = started(live)
    assert [r.agentId for r in replies] == [live.world.bot.id, coder.id]
    helper_answer = bot_chat(live, live.world.bot)[0].id
    assert replies[0].entryIds == [message]
    assert replies[1].entryIds == [message, helper_answer]  # sees helper's answer, not its own


def test_a_bot_chain_runs_and_ends(live):
    coder = make_bot(live.world.house, "coder", provider=PROVIDER, model=MODEL)
    live.fake.script(Text("@coder can you check the tests?"), Text("Tests are green."))
    live.post("@helper please coordinate")
    live.settle()
    replies = started(live)
    assert [r.agentId for r in replies] == [live.world.bot.id, coder.id]
    asked = bot_chat(live, live.world.bot)[0].id
    assert asked in replies[1].entryIds
    assert [c.payload.text for c in bot_chat(live, coder)] == ["Tests are green."]
    assert of_type(live, "signal.thread_director.outcome")[-1].payload.reason is None


# -- who answers without a mention -----------------------------------------------------


def test_a_one_person_one_bot_conversation_goes_on_until_someone_else_speaks(live):
    member, owner = live.world.member, live.world.owner
    post_as(live, member, "@helper hi")
    live.settle()
    follow_up = post_as(live, member, "and what about tomorrow?")
    live.settle()
    assert started(live)[-1].entryIds == [follow_up]  # a conversation: no mention needed
    post_as(live, owner, "please keep this message")
    live.settle()
    post_as(live, member, "and the day after?")
    live.settle()
    assert len(started(live)) == 2  # two people now: unmentioned messages are theirs
    outcomes = of_type(live, "signal.thread_director.outcome")
    assert all(o.payload.reason is None for o in outcomes)  # nobody expected an answer
    assert live.now()["now"]["silence"] is None


def test_involvement_everything_answers_unmentioned_messages_and_mentions_stops_it(live):
    owner_api = live.world.client_for(live.world.owner)
    url = "/api/houses/h/bots/helper"

    def involve(value):
        response = owner_api.patch(
            url, json.dumps({"involvement": value}), content_type="application/json"
        )
        assert response.status_code == 200, response.content
        assert response.json()["bot"]["involvement"] == value

    involve("everything")
    post_as(live, live.world.owner, "hi all")
    heard = post_as(live, live.world.member, "lunch at noon?")
    live.settle()
    assert heard in [i for r in started(live) for i in r.entryIds]
    count = len(started(live))
    involve("mentions")
    post_as(live, live.world.member, "or at one?")
    live.settle()
    assert len(started(live)) == count
    assert of_type(live, "signal.thread_director.outcome")[-1].payload.reason is None


def test_a_member_cannot_change_involvement_and_bad_values_are_refused(live):
    url = "/api/houses/h/bots/helper"
    member_api = live.world.client_for(live.world.member)
    body = json.dumps({"involvement": "everything"})
    assert member_api.patch(url, body, content_type="application/json").status_code == 403
    owner_api = live.world.client_for(live.world.owner)
    bad = owner_api.patch(
        url, json.dumps({"involvement": "always"}), content_type="application/json"
    )
    assert bad.status_code == 400 and "involvement" in bad.json()["error"]


def test_owners_set_involvement_on_the_members_page(live):
    page = live.world.client_for(live.world.owner)
    response = page.post("/houses/h/bots/helper/involvement", {"involvement": "everything"})
    assert response.status_code == 302
    assert Agent.objects.get(pk=live.world.bot.pk).involvement == "everything"
    assert 'value="everything" selected' in page.get("/houses/h/members/").content.decode()


# -- failures --------------------------------------------------------------------------


def test_a_failure_with_a_dispatch_id_ends_its_reply_in_one_short_line(live):
    live.fake.script(Fail(), Fail())
    live.post("@helper hello")
    live.settle()
    final = [e for e in of_type(live, "signal.dispatch.failed") if e.payload.final]
    assert len(final) == 1 and final[0].payload.dispatchId == started(live)[0].dispatchId
    body = live.now()
    assert body["status"]["state"] == "error" and body["now"]["reply"] is None
    page = live.world.client_for(live.world.member).get(f"/threads/{live.world.thread.id}/")
    html = page.content.decode()
    assert "@helper couldn&#x27;t reply: 500 fake upstream failure</p>" in html


def test_a_failure_without_a_dispatch_id_leaves_the_running_reply_alone(live):
    """Issue 13, item 4: a wake failure while a reply runs ends nothing."""
    gate = live.fake.hold()
    live.post("@helper hello")
    gate.arrived.wait(30)
    failure = DispatchFailed(stage="wake", error="the channel layer is down")
    stream_writer().append(live.world.thread.stream_name, new_entry(failure))
    body = live.now()
    assert body["now"]["reply"]["agentId"] == live.world.bot.id
    assert body["status"]["state"] == "working"
    gate.release()
    live.settle()
    body = live.now()
    assert body["status"]["state"] == "done"
    assert [b["state"] for b in body["now"]["bots"]] == ["done"]
    assert len(bot_chat(live, live.world.bot)) == 1


def test_a_bot_missing_its_key_fails_in_one_line_an_owner_can_act_on(live, settings):
    from dispatch.pi.config import PLAIN_COMPAT, PiModel, PiProvider, write_agent_dir

    keyed = PiProvider(
        baseUrl=live.fake.base_url,
        apiKey="ARBE_BOTKEY_TEST_WRITER",  # a bot key variable the server doesn't have
        api="openai-completions",
        compat=PLAIN_COMPAT,
        models=[PiModel(id=MODEL)],
    )
    from tests.peers.pi_home import fake_provider

    write_agent_dir(
        settings.PI_AGENT_DIR, {PROVIDER: fake_provider(live.fake.base_url), "keyed": keyed}
    )
    make_bot(live.world.house, "writer", provider="keyed", model=MODEL)
    live.post("@writer draft the notes")
    live.settle()
    failed = of_type(live, "signal.dispatch.failed")
    assert len(failed) == 1 and failed[0].payload.final
    assert live.fake.requests == []  # refused before any model call
    html = live.world.client_for(live.world.member).get(f"/threads/{live.world.thread.id}/")
    text = html.content.decode()
    assert (
        "@writer couldn&#x27;t reply: no API key for keyed; an owner can fix it on the members page"
        in text
    )
    raw = json.dumps([e.payload.error for e in failed]) + text + json.dumps(live.now())
    assert not [p for p in SERVER_PATHS if p in raw]


# -- configuration checked when set ----------------------------------------------------


def test_a_configuration_pi_cannot_run_is_refused_when_set(live, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server")  # set or not, the answer is the same
    owner_api = live.world.client_for(live.world.owner)
    add = {"handle": "writer", "provider": "openai", "model": "gpt-4o-mini"}
    response = owner_api.post(
        "/api/houses/h/bots", json.dumps(add), content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == (
        "apiKeyEnv: Name a key variable for openai: OPENAI_API_KEY is not a bot key variable "
        "(its name must start with ARBE_BOTKEY_ or be listed in ARBE_BOT_KEY_ALLOW)."
    )
    unknown = {"handle": "writer", "provider": "openia", "model": "x"}
    response = owner_api.post(
        "/api/houses/h/bots", json.dumps(unknown), content_type="application/json"
    )
    assert response.status_code == 400 and "Pi has no provider 'openia'" in response.json()["error"]
    change = json.dumps({"provider": "openai"})
    response = owner_api.patch("/api/houses/h/bots/helper", change, content_type="application/json")
    assert response.status_code == 400 and "OPENAI_API_KEY" in response.json()["error"]
    # Judged on the name: a bot key variable the server lacks is accepted when set.
    monkeypatch.delenv("ARBE_BOTKEY_WRITER", raising=False)
    ok = {**add, "apiKeyEnv": "ARBE_BOTKEY_WRITER"}
    response = owner_api.post("/api/houses/h/bots", json.dumps(ok), content_type="application/json")
    assert response.status_code == 201
    assert response.json()["bot"]["apiKeyEnv"] == "ARBE_BOTKEY_WRITER"


def test_the_members_page_refuses_a_bot_without_a_bot_key_variable(live, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server")
    page = live.world.client_for(live.world.owner)
    form = {"handle": "writer", "provider": "openai", "model": "gpt-4o-mini"}
    response = page.post("/houses/h/bots/add", form, follow=True)
    assert "OPENAI_API_KEY is not a bot key variable" in response.content.decode()
    assert not Agent.objects.filter(handle="writer").exists()


def test_the_check_action_makes_one_call_through_pi_and_shows_the_result(live):
    page = live.world.client_for(live.world.owner)
    response = page.post("/houses/h/bots/helper/check", follow=True)
    html = response.content.decode()
    assert "@helper answered “Hello from fake LLM!”" in html  # the whole answer
    assert len(live.fake.requests) == 1
    live.fake.script(Fail(message="quota exceeded"))
    api = page.post("/api/houses/h/bots/helper/check")
    assert api.status_code == 200
    result = api.json()
    assert result["ok"] is False and result["result"].startswith("@helper couldn't answer: ")
    assert "quota exceeded" in result["result"]


# -- the current view: spend, phases, runs ---------------------------------------------


def test_spend_accumulates_live_during_a_reply(live):
    live.fake.script(bash("echo one"), Text("finished"))
    gate = live.fake.hold()
    second = live.fake.hold()  # the model call after the tool round is held too
    live.post("@helper go")
    gate.arrived.wait(30)
    gate.release()
    mid = live.wait_for(lambda: (b := live.now())["now"]["spend"].get("totalTokens") and b)
    assert mid["now"]["reply"] is not None  # counted while the reply still runs
    second.release()
    live.settle()
    end = live.now()["now"]["spend"]
    assert end["totalTokens"] >= mid["now"]["spend"]["totalTokens"]
    finished = of_type(live, "signal.dispatch.finished")[-1].payload.spend
    assert finished.totalTokens == end["totalTokens"]


def test_a_run_shows_phase_round_and_spend_and_its_parent_reads_the_childs_record(live):
    from threads.models import Thread

    live.fake.script(bash("echo working"), Text("all done"))
    gate = live.fake.hold()
    second = live.fake.hold()  # the model call after the tool
    response = live.client.post(
        f"/api/threads/{live.world.thread.id}/runs",
        json.dumps({"agent": "helper", "task": "run the tool"}),
        content_type="application/json",
    )
    assert response.status_code == 201
    child = Thread.objects.get(pk=response.json()["run"]["childThreadId"])
    gate.arrived.wait(30)
    gate.release()

    def in_round_one():
        body = live.now(child)
        runs = body["now"]["runs"]
        return runs and runs[0].get("round", 0) >= 1 and body

    body = live.wait_for(in_round_one)
    (run,) = body["now"]["runs"]
    assert run["phase"] in ("thinking", "tool") and run["spend"]["totalTokens"] > 0
    assert body["now"]["spend"]["totalTokens"] > 0
    assert body["status"]["state"] == "working" and "round 1" in body["status"]["message"]
    child.refresh_from_db()
    parent = live.now()
    (record,) = [r for r in parent["status"]["records"] if r["kind"] == "run"]
    assert (record["state"], record["message"]) == (child.status, child.status_message)
    (seen,) = parent["now"]["runs"]  # the parent's view of the run carries its spend so far
    assert seen["spend"]["totalTokens"] > 0
    assert parent["now"]["spend"]["totalTokens"] == seen["spend"]["totalTokens"]
    second.release()
    live.settle()
    assert live.now(child)["status"]["state"] == "done"


def test_an_archived_childs_run_does_not_count_for_its_parent(live):
    from django.utils import timezone

    from dispatch.runs import claim_run
    from threads.models import Thread

    claim = claim_run(
        live.world.thread, handle="helper", task="never started", by=live.world.owner.agent
    )
    live.settle()
    assert [r["kind"] for r in live.now()["status"]["records"]] == ["thread", "run"]
    Thread.objects.filter(pk=claim.child_id).update(archived_at=timezone.now())
    assert [r["kind"] for r in live.now()["status"]["records"]] == ["thread"]
