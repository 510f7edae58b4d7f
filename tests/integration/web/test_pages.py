"""The thread and house pages: rendered from canonical entries, escaped, bounded queries."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from houses.models import Agent
from tests.factories import make_house
from threads.entries import (
    Chat,
    DispatchFinished,
    DispatchStarted,
    PiAssistant,
    PiToolResult,
    Spend,
)
from threads.lifecycle import create_thread, new_entry
from threads.models import Thread
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def append(world, payload, author=None):
    entry = new_entry(payload, author=author)
    stream_writer().append(world.thread.stream_name, entry)
    return entry


def bot_reply(world, answer: str):
    bot = world.bot.id
    append(world, DispatchStarted(dispatchId="d1", agentId=bot, entryIds=[]), bot)
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.txt"}}
    append(world, PiAssistant(dispatchId="d1", message={"content": [call]}), bot)
    result = {"toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": "42"}]}
    append(world, PiToolResult(dispatchId="d1", message=result), bot)
    answer_entry = append(world, Chat(text=answer), bot)
    append(world, DispatchFinished(dispatchId="d1", spend=Spend(totalTokens=12)), bot)
    return answer_entry


def test_the_thread_page_renders_chat_transcript_and_narration(world):
    client = world.client_for(world.member)
    client.post(f"/api/threads/{world.thread.id}/entries", {"text": "<img src=x onerror=alert(1)>"})
    bot_reply(world, "**bold** <script>alert(1)</script> <img src=x onerror=alert(2)>")
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<strong>bold</strong>" in html
    assert "<script>alert(1)</script>" not in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html  # raw HTML is text, for bots too
    assert "<img src=x onerror" not in html  # the person's payload stays text
    # The reply folds into its answer: a footer with the spend and the transcript (the tool
    # call and its result); no "is replying" line stays behind.
    answer = html.split("<strong>bold</strong>")[1].split("</article>")[0]
    assert '<span id="spend-d1" class="spend">12 tokens</span>' in answer
    assert '<details class="transcript">' in answer
    assert 'id="tr-d1"' in answer and "read →" in answer and "42" in answer
    assert "is thinking" not in html and "Reply finished" not in html
    assert 'id="now"' in html and 'id="stream-offset"' in html
    assert f'ws-connect="/ws/threads/{world.thread.id}/?offset=' in html
    assert "@helper" in html  # the mention hint


def test_delete_controls_are_personalised_by_css_not_markup(world):
    client = world.client_for(world.member)
    client.post(f"/api/threads/{world.thread.id}/entries", {"text": "mine"})
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    assert f'data-author="{world.member.agent.id}"' in html
    # live.js turns the body's viewer id into a rule showing that author's message menu.
    assert f'data-viewer="{world.member.agent.id}"' in html.split("<body")[1].split(">")[0]
    assert "is-owner" not in html.split("<body")[1].split(">")[0]
    owner_html = world.client_for(world.owner).get(f"/threads/{world.thread.id}/").content.decode()
    assert "is-owner" in owner_html.split("<body")[1].split(">")[0]
    # The server still decides: another member can't delete it.
    entry_id = html.split('class="entry chat" data-author')[0].rsplit('id="entry-', 1)[1][:-2]
    response = world.client_for(world.author).delete(
        f"/api/threads/{world.thread.id}/entries/{entry_id}"
    )
    assert response.status_code == 403


def test_a_stranger_gets_404_and_anonymous_goes_to_login(world):
    assert world.client_for(world.stranger).get(f"/threads/{world.thread.id}/").status_code == 404
    response = world.client_for(None).get(f"/threads/{world.thread.id}/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_tombstoned_chat_is_gone_from_the_page(world):
    client = world.client_for(world.member)
    posted = client.post(f"/api/threads/{world.thread.id}/entries", {"text": "oops"}).json()
    client.delete(f"/api/threads/{world.thread.id}/entries/{posted['entry']['id']}")
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    assert "oops" not in html


def page_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_thread_page_queries_do_not_grow_with_entries(world):
    client = world.client_for(world.member)
    url = f"/threads/{world.thread.id}/"
    before = page_queries(client, url)
    for i in range(5):
        client.post(f"/api/threads/{world.thread.id}/entries", {"text": f"m{i}"})
    bot_reply(world, "done")
    assert page_queries(client, url) == before
    # 13: the bot lines by the compose box (2), the "New messages" divider, the thread's bell;
    # 6 more for the sidebar (houses/sidebar.py)
    assert before <= 19


def test_house_page_lists_threads_by_recency_in_bounded_queries(world):
    client = world.client_for(world.member)
    url = f"/houses/{world.house.slug}/"
    before = page_queries(client, url)
    client.post(f"/api/threads/{world.other_thread.id}/entries", {"text": "newest"})
    picked = {"status": "working", "status_message": "Helper is thinking"}
    Thread.objects.filter(pk=world.other_thread.pk).update(**picked)
    html = client.get(url).content.decode()
    assert html.index(f'id="thread-{world.other_thread.id}"') < html.index(
        f'id="thread-{world.thread.id}"'
    )
    assert 'ws-connect="/ws/houses/h/"' in html
    assert "status-working" in html
    assert page_queries(client, url) == before


def test_houses_page_shows_rollup_counts(world):
    client = world.client_for(world.member)
    client.post(f"/api/threads/{world.thread.id}/entries", {"text": "busy"})
    assert "working" not in client.get("/").content.decode()  # waiting for the director
    Thread.objects.filter(pk=world.thread.pk).update(status="working", status_message="x")
    html = client.get("/").content.decode()
    assert "status-working" in html and "1 working" not in html  # the badge says it
    Thread.objects.filter(pk=world.other_thread.pk).update(status="working", status_message="y")
    assert "2 working" in client.get("/").content.decode()


def test_houses_page_shows_each_house_state_and_who_speaks_for_it(world):
    client = world.client_for(world.member)
    html = client.get("/").content.decode()
    assert 'class="badge status-' not in html  # idle says nothing
    working = {"status": "working", "status_message": f"{world.bot.id} is thinking"}
    Thread.objects.filter(pk=world.thread.pk).update(**working)
    html = client.get("/").content.decode()
    assert 'class="badge status-working">working</span>' in html
    # A record stored with a bot's id (before records named bots) reads with its handle.
    assert f"{world.thread.title}: @helper is thinking</p>" in html
    Thread.objects.filter(pk=world.thread.pk).update(status="done", status_message="Replied.")
    html = client.get("/").content.decode()
    assert 'class="badge status-done">replied</span>' in html and "Replied." not in html


def test_houses_page_queries_do_not_grow_with_houses(world):
    client = world.client_for(world.owner)
    before = page_queries(client, "/")
    for slug in ("h2", "h3", "h4"):
        house = make_house(slug, owner=world.owner)
        create_thread(house=house, title=f"in {slug}", by=world.owner.agent)
    assert page_queries(client, "/") == before


def test_delegate_form_claims_a_run_and_links_the_child(world, backstage_for_tests):
    client = world.client_for(world.member)
    response = client.post(
        f"/threads/{world.thread.id}/runs", {"agent": "@helper", "task": "write tests"}
    )
    assert response.status_code == 302
    assert len(backstage_for_tests) == 1  # start_run was called with the claim
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    child = world.thread.children.get()
    assert f'href="/threads/{child.id}/">T/{child.id}</a>' in html


def test_delegate_form_reports_an_unknown_bot(world):
    Agent.objects.filter(pk=world.bot.pk).update(active=False)
    client = world.client_for(world.member)
    response = client.post(
        f"/threads/{world.thread.id}/runs", {"agent": "helper", "task": "x"}, follow=True
    )
    assert "no bot @helper" in response.content.decode()
