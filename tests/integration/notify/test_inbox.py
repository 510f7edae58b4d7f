"""The inbox index (notify.inbox) kept at the append seam, and what reads it: /api/inbox,
/inbox/, the bell, marking read, rebuilding from the logs, membership on read."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from houses.membership import remove_member
from notify.models import InboxItem
from threads.entries import Chat, DispatchStarted
from threads.lifecycle import create_thread, new_entry
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def post(world, user, text, thread=None) -> str:
    thread = thread or world.thread
    response = world.client_for(user).post(f"/api/threads/{thread.id}/entries", {"text": text})
    assert response.status_code == 201
    return response.json()["entry"]["id"]


def inbox(world, user) -> dict:
    response = world.client_for(user).get("/api/inbox")
    assert response.status_code == 200
    return response.json()


def test_a_mention_reaches_the_inbox_of_the_person_named_and_nobody_else(world):
    said = post(
        world, world.member, "@olive can you look at the plan?  @nobody", world.other_thread
    )
    post(world, world.member, "no mention here")
    got = inbox(world, world.owner)
    assert got["unread"] == 1
    [item] = got["items"]
    assert item["entryId"] == said and item["kind"] == "mention" and item["unread"] is True
    assert item["threadTitle"] == "Other" and item["house"] == {"slug": "h", "name": "H"}
    assert item["author"]["handle"] == "mia" and item["text"].startswith("@olive can you")
    assert item["url"] == f"/threads/{world.other_thread.id}/?around={said}#entry-{said}"
    assert inbox(world, world.member)["items"] == []  # the author
    assert inbox(world, world.author)["items"] == []


def test_mentioning_yourself_puts_nothing_in_your_inbox(world):
    post(world, world.owner, "note to @olive: remember")
    assert inbox(world, world.owner)["items"] == []


def test_reading_the_thread_past_it_reads_the_item(world):
    post(world, world.member, "@olive first", world.other_thread)
    assert inbox(world, world.owner)["unread"] == 1
    assert (
        world.client_for(world.owner).get(f"/threads/{world.other_thread.id}/").status_code == 200
    )
    got = inbox(world, world.owner)
    assert got["unread"] == 0 and got["items"][0]["unread"] is False
    post(world, world.member, "@olive second", world.other_thread)
    got = inbox(world, world.owner)
    assert got["unread"] == 1 and [i["unread"] for i in got["items"]] == [True, False]


def test_a_deleted_message_leaves_the_inbox(world):
    said = post(world, world.member, "@olive oops")
    assert len(inbox(world, world.owner)["items"]) == 1
    response = world.client_for(world.member).delete(
        f"/api/threads/{world.thread.id}/entries/{said}"
    )
    assert response.status_code in (200, 201, 204)
    assert inbox(world, world.owner) == {"items": [], "unread": 0, "next": None}
    assert not InboxItem.objects.filter(entry_id=said).exists()


def test_a_bots_reply_reaches_whoever_asked(world):
    asked = post(world, world.member, "@helper summarise please")
    writer = stream_writer()
    started = DispatchStarted(dispatchId="d1", agentId=world.bot.id, entryIds=[asked])
    writer.append(world.thread.stream_name, new_entry(started, author=world.bot.id))
    writer.append(
        world.thread.stream_name, new_entry(Chat(text="Done: three points."), author=world.bot.id)
    )
    [item] = inbox(world, world.member)["items"]
    assert item["kind"] == "reply" and item["author"]["bot"] is True
    assert item["text"] == "Done: three points."
    assert inbox(world, world.owner)["items"] == []  # Olive didn't ask


def test_mark_all_read_reads_the_inbox_but_not_the_threads(world):
    post(world, world.member, "@olive one")
    post(world, world.member, "@olive two", world.other_thread)
    owner = world.client_for(world.owner)
    assert owner.post("/inbox/read").status_code == 302
    got = inbox(world, world.owner)
    assert got["unread"] == 0 and all(not i["unread"] for i in got["items"])
    house = owner.get(f"/houses/{world.house.slug}/").content.decode()
    assert 'title="1 unread message"' in house  # each thread still has its message unread


def test_a_removed_member_sees_nothing_of_the_house(world):
    post(world, world.owner, "@mia welcome")
    assert len(inbox(world, world.member)["items"]) == 1
    membership = world.house.memberships.get(user=world.member)
    remove_member(membership, by=world.owner.agent)
    assert inbox(world, world.member) == {"items": [], "unread": 0, "next": None}
    page = world.client_for(world.member).get("/inbox/").content.decode()
    assert "welcome" not in page


def test_the_inbox_page_and_the_bell_list_the_same_items(world):
    post(world, world.member, "@olive <b>look</b> at this", world.other_thread)
    page = world.client_for(world.owner).get("/inbox/").content.decode()
    assert "&lt;b&gt;look&lt;/b&gt; at this" in page and "<b>look" not in page
    assert 'id="inbox-bell"' in page and 'data-count="1"' in page
    assert "mentioned you" in page and "Other" in page
    home = world.client_for(world.owner).get("/").content.decode()
    assert 'data-count="1"' in home  # the bell on every page


def test_rebuild_inbox_makes_the_index_again_from_the_logs_keeping_reads(world):
    one = post(world, world.member, "@olive one")
    post(world, world.member, "@olive two", world.other_thread)
    gone = post(world, world.member, "@olive three")
    world.client_for(world.member).delete(f"/api/threads/{world.thread.id}/entries/{gone}")
    InboxItem.objects.filter(entry_id=one).update(read_at="2026-01-01T00:00:00Z")
    before = sorted(InboxItem.objects.values_list("user_id", "entry_id", "kind", "seq", "read_at"))
    InboxItem.objects.exclude(entry_id=one).delete()
    InboxItem.objects.filter(entry_id=one).update(seq=99, text="stale")
    call_command("rebuild_inbox")
    after = sorted(InboxItem.objects.values_list("user_id", "entry_id", "kind", "seq", "read_at"))
    assert after == before and len(after) == 2
    assert InboxItem.objects.get(entry_id=one).text == "@olive one"


def test_the_api_pages_with_a_cursor_and_refuses_a_made_up_one(world):
    said = [post(world, world.member, f"@olive number {n}") for n in range(3)]
    client = world.client_for(world.owner)
    first = client.get("/api/inbox?limit=2").json()
    assert [i["entryId"] for i in first["items"]] == said[::-1][:2]
    rest = client.get(f"/api/inbox?limit=2&cursor={first['next']}").json()
    assert [i["entryId"] for i in rest["items"]] == [said[0]] and rest["next"] is None
    assert client.get("/api/inbox?cursor=nope").status_code == 400
    assert world.client_for(None).get("/api/inbox").status_code == 401


def test_the_inbox_page_reads_a_constant_number_of_queries(world):
    for n in range(3):
        post(world, world.member, f"@olive hello {n}")
    client = world.client_for(world.owner)
    client.get("/inbox/")
    with CaptureQueriesContext(connection) as few:
        client.get("/inbox/")
    with CaptureQueriesContext(connection) as few_api:
        client.get("/api/inbox")
    for n in range(20):
        thread = create_thread(house=world.house, title=f"T{n}", by=world.owner.agent)
        post(world, world.member, f"@olive there {n}", thread)
    with CaptureQueriesContext(connection) as many:
        client.get("/inbox/")
    with CaptureQueriesContext(connection) as many_api:
        client.get("/api/inbox")
    # session, user, the page of items, their authors, the bell's count, the top bar's name
    assert len(many) == len(few) <= 6, [q["sql"][:80] for q in many.captured_queries]
    assert len(many_api) == len(few_api)


def test_an_edit_by_the_author_changes_the_text_shown(world):
    said = post(world, world.member, "@olive lunch at 12?")
    response = world.client_for(world.member).patch(
        f"/api/threads/{world.thread.id}/entries/{said}",
        {"text": "@olive lunch at 1?"},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    [item] = inbox(world, world.owner)["items"]
    assert item["text"] == "@olive lunch at 1?"


def test_the_inbox_page_loads_older_items_below(world, monkeypatch):
    from notify import yours

    monkeypatch.setattr(yours, "PAGE", 2)
    said = [post(world, world.member, f"@olive item {n}") for n in range(3)]
    client = world.client_for(world.owner)
    html = client.get("/inbox/").content.decode()
    assert said[2] in html and said[1] in html and said[0] not in html
    start = html.index("?after=") + len("?after=")
    cursor = html[start : html.index('"', start)]
    older = client.get(f"/inbox/?after={cursor}", headers={"HX-Request": "true"})
    part = older.content.decode()
    assert said[0] in part and said[1] not in part and "<html" not in part
    assert client.get("/inbox/?after=nope").status_code == 404
