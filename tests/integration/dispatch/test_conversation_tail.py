"""A one-person conversation with a bot (issue 25): a director pass reads only the tail.

Who has spoken is kept with the director's decided offset, so the conversation rule
(exactly one person and one bot ever spoke) holds across settled offsets and deletions
without the pass reading the whole log."""

import json

import pytest

import dispatch.director
import threads.current
from threads.models import Thread
from threads.reading import read_entries

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


class WholeLogRead(AssertionError):
    pass


@pytest.fixture
def tail_only(monkeypatch):
    """The director's reads (and the view it folds) must start past the beginning."""
    whole_reads = []

    def only_the_tail(thread_id, offset="-1"):
        if offset == "-1":
            whole_reads.append(thread_id)
            raise WholeLogRead(f"the whole log of {thread_id} was read")
        return read_entries(thread_id, offset)

    def watch():
        monkeypatch.setattr(dispatch.director, "read_entries", only_the_tail)
        monkeypatch.setattr(threads.current, "read_entries", only_the_tail)
        return whole_reads

    return watch


def bot_answers(live):
    return [e for e in live.entries() if e.type == "chat" and e.authorId == live.world.bot.id]


def post_as(live, user, text):
    response = live.world.client_for(user).post(
        f"/api/threads/{live.world.thread.id}/entries",
        json.dumps({"payload": {"type": "chat", "text": text}}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()["entry"]["id"]


def test_the_conversation_rule_holds_on_the_tail_across_offsets_and_deletions(live, tail_only):
    first = live.post("@helper hello")
    live.settle()
    row = Thread.objects.get(pk=live.world.thread.pk)
    assert row.director_offset and row.director_speakers == {
        "people": [live.world.member.agent.id],
        "bots": [live.world.bot.id],
    }
    whole_reads = tail_only()
    for n in range(3):  # every message of the conversation is answered, reading the tail
        live.post(f"and then {n}?")
        live.settle()
    assert len(bot_answers(live)) == 4
    client = live.world.client_for(live.world.member)
    response = client.delete(f"/api/threads/{live.world.thread.id}/entries/{first}")
    assert response.status_code == 200
    live.post("still there?")  # a deletion doesn't unmake who spoke
    live.settle()
    assert len(bot_answers(live)) == 5
    assert whole_reads == []
    assert not [e for e in live.entries() if e.type == "signal.dispatch.failed"]

    post_as(live, live.world.author, "hi both")  # a second person: no conversation any more
    live.settle()
    live.post("anyone?")
    live.settle()
    assert len(bot_answers(live)) == 5
    assert whole_reads == []
    stored = Thread.objects.get(pk=live.world.thread.pk).director_speakers
    assert len(stored["people"]) == 2


def test_a_thread_settled_before_speakers_were_kept_reads_its_log_once(live, tail_only):
    live.post("@helper hello")
    live.settle()
    Thread.objects.filter(pk=live.world.thread.pk).update(director_speakers=None)
    live.post("and then?")  # the whole log says it is a conversation
    live.settle()
    assert len(bot_answers(live)) == 2
    assert Thread.objects.get(pk=live.world.thread.pk).director_speakers is not None
    whole_reads = tail_only()
    live.post("and after that?")
    live.settle()
    assert len(bot_answers(live)) == 3 and whole_reads == []
