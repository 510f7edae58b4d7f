"""A reply reads what its bot's session lacks: the entries after the session's mark, or a
bounded tail for a fresh session; never the whole log of a long thread (issue 36)."""

import json

import pytest

import dispatch.conversation
import threads.reading
from dispatch import session_mark

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def reads(monkeypatch):
    """The offsets the conversation reads its thread from ("-1": the whole log)."""
    seen = []
    read = threads.reading.read_entries

    def watched(thread_id, offset="-1"):
        seen.append(offset)
        return read(thread_id, offset)

    monkeypatch.setattr(dispatch.conversation, "read_entries", watched)
    monkeypatch.setattr(threads.reading, "read_entries", watched)
    return seen


def user_text(request) -> str:
    """The newest user message Pi sent the model (the reply's prompt)."""
    return str([m for m in request["messages"] if m["role"] == "user"][-1]["content"])


def post_as(live, user, text):
    response = live.world.client_for(user).post(
        f"/api/threads/{live.world.thread.id}/entries",
        json.dumps({"payload": {"type": "chat", "text": text}}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()["entry"]["id"]


def test_later_replies_read_from_the_sessions_mark_and_hand_only_new_messages(live, reads):
    live.post("@helper first question")
    live.settle()
    world = live.world
    path = session_mark.mark_path(world.thread.house_id, world.thread.id, world.bot.id)
    first = session_mark.load(path)
    assert first is not None and first.offset
    reads.clear()
    for n in range(3):
        live.post(f"@helper question {n + 2}")
        live.settle()
        assert "-1" not in reads, reads
        asked = user_text(live.fake.requests[-1])
        assert f"question {n + 2}" in asked and "first question" not in asked
    mark = session_mark.load(path)
    assert mark.generation == first.generation and mark.offset != first.offset


def test_a_fresh_session_in_a_long_thread_is_seeded_from_a_bounded_tail(live, reads, monkeypatch):
    monkeypatch.setattr(dispatch.conversation, "PROMPT_MESSAGES", 20)
    for n in range(100):  # two people talking: no reply owed, windows close every 30
        post_as(live, live.world.author if n % 2 else live.world.member, f"note {n}")
    live.settle()
    reads.clear()
    live.post("@helper sum it up")
    live.settle()
    assert reads and "-1" not in reads, reads
    asked = user_text(live.fake.requests[-1])
    assert "note 99" in asked and "sum it up" in asked and "earlier messages not shown" in asked
    assert "note 80" in asked and "note 79" not in asked and "note 1\\n" not in asked
