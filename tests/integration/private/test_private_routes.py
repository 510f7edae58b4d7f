"""The routes of private threads and direct conversations: the API and the pages' forms,
each refusal a clear 4xx, and 404 for whoever doesn't read the thread."""

import pytest

from threads import privacy
from threads.models import Thread, ThreadMember

pytestmark = pytest.mark.django_db(transaction=True)


def members(thread) -> set[str]:
    return set(ThreadMember.objects.filter(thread=thread).values_list("agent_id", flat=True))


def test_a_direct_conversation_opens_once_and_reopens(world):
    mia, olive = world.client_for(world.member), world.client_for(world.owner)
    first = mia.post(
        "/api/houses/h/direct", {"members": [world.owner.agent.pk]}, content_type="application/json"
    )
    assert first.status_code == 201, first.content
    row = first.json()["thread"]
    assert row["visibility"] == "direct" and first.json()["new"] is True
    assert row["title"] == world.owner.agent.display_name  # the other people, for the caller
    assert {m["agentId"] for m in row["members"]} == {world.owner.agent.pk, world.member.agent.pk}
    again = olive.post(
        "/api/houses/h/direct",
        {"members": [world.member.agent.pk]},
        content_type="application/json",
    )
    assert again.status_code == 200 and again.json()["thread"]["id"] == row["id"]
    assert again.json()["thread"]["title"] == world.member.agent.display_name
    ari = world.client_for(world.author)
    assert ari.get(f"/api/threads/{row['id']}").status_code == 404
    assert ari.get(f"/api/threads/{row['id']}/members").status_code == 404
    assert ari.get(f"/threads/{row['id']}/").status_code == 404
    listed = ari.get("/api/threads").json()["threads"]
    assert row["id"] not in {t["id"] for t in listed}


def test_direct_refusals_are_400s_with_the_reason(world):
    mia = world.client_for(world.member)

    def ask(body):
        return mia.post("/api/houses/h/direct", body, content_type="application/json")

    outsider = ask({"members": [world.stranger.agent.pk]})
    assert outsider.status_code == 400
    assert "must be in its house" in outsider.json()["error"]
    assert ask({"members": []}).status_code == 400
    assert ask({"members": [f"ag_{i}" for i in range(10)]}).status_code == 400
    assert ask({"members": "olive"}).status_code == 400
    assert ask({"members": [world.owner.agent.pk], "extra": 1}).status_code == 400
    eve = world.client_for(world.stranger)
    refused = eve.post(
        "/api/houses/h/direct", {"members": [world.owner.agent.pk]}, content_type="application/json"
    )
    assert refused.status_code == 404
    thread, _ = privacy.open_direct(world.house, world.member.agent, [world.owner.agent.pk])
    added = mia.post(
        f"/api/threads/{thread.pk}/members",
        {"agentId": world.author.agent.pk},
        content_type="application/json",
    )
    assert added.status_code == 400 and "start another one" in added.json()["error"]


def test_a_private_thread_from_the_api_and_its_members(world):
    olive = world.client_for(world.owner)
    made = olive.post(
        "/api/houses/h/threads",
        {"title": "Salaries", "members": [world.member.agent.pk]},
        content_type="application/json",
    )
    assert made.status_code == 201 and made.json()["thread"]["visibility"] == "private"
    thread = Thread.objects.get(pk=made.json()["thread"]["id"])
    assert members(thread) == {world.owner.agent.pk, world.member.agent.pk}
    url = f"/api/threads/{thread.pk}/members"
    mia, ari = world.client_for(world.member), world.client_for(world.author)
    # Mia reads it but didn't start it and owns nothing: she can't add people.
    body = {"agentId": world.author.agent.pk}
    assert mia.post(url, body, content_type="application/json").status_code == 403
    assert ari.post(url, body, content_type="application/json").status_code == 404
    assert olive.post(url, body, content_type="application/json").status_code == 201
    assert ari.get(f"/api/threads/{thread.pk}").status_code == 200
    assert olive.post(url, body, content_type="application/json").json()["added"] is False
    # Anyone leaves; nobody else removes another but the starter or an owner.
    assert mia.delete(f"{url}/{world.author.agent.pk}").status_code == 403
    assert ari.delete(f"{url}/{world.author.agent.pk}").json() == {"removed": True}
    assert ari.get(f"/api/threads/{thread.pk}").status_code == 404
    assert ari.delete(f"{url}/{world.author.agent.pk}").status_code == 404
    assert olive.delete(f"{url}/{world.member.agent.pk}").status_code == 200
    last = olive.delete(f"{url}/{world.owner.agent.pk}")
    assert last.status_code == 400 and "last member" in last.json()["error"]


def test_making_an_open_thread_private(world):
    url = f"/api/threads/{world.thread.pk}/private"
    mia, olive = world.client_for(world.member), world.client_for(world.owner)
    body = {"members": [world.member.agent.pk]}
    assert mia.post(url, body, content_type="application/json").status_code == 403
    made = olive.post(url, body, content_type="application/json")
    assert made.status_code == 200 and made.json()["thread"]["visibility"] == "private"
    assert world.client_for(world.author).get(f"/api/threads/{world.thread.pk}").status_code == 404
    again = olive.post(url, body, content_type="application/json")
    assert again.status_code == 400 and "already private" in again.json()["error"]


def test_the_pages_forms(world):
    mia = world.client_for(world.member)
    opened = mia.post("/houses/h/direct", {"agent": [world.owner.agent.pk]})
    thread = Thread.objects.get(visibility="direct")
    assert opened.status_code == 302 and opened["Location"] == f"/threads/{thread.pk}/"
    # Nobody ticked: back to the house with the reason.
    empty = mia.post("/houses/h/direct", {}, follow=True)
    assert "Choose who the message is for." in empty.content.decode()
    made = mia.post(
        "/houses/h/threads/new",
        {"title": "Surprise party", "private": "on", "member": [world.author.agent.pk]},
    )
    private = Thread.objects.get(title="Surprise party")
    assert made["Location"] == f"/threads/{private.pk}/" and private.visibility == "private"
    assert members(private) == {world.member.agent.pk, world.author.agent.pk}
    add = mia.post(f"/threads/{private.pk}/members/add", {"agent": [world.bot.pk]})
    assert add.status_code == 302 and world.bot.pk in members(private)
    # Olive owns the house but isn't in the thread: the same 404 as a thread that isn't.
    olive = world.client_for(world.owner)
    assert olive.post(f"/threads/{private.pk}/members/add", {"agent": []}).status_code == 404
    left = world.client_for(world.author).post(
        f"/threads/{private.pk}/members/{world.author.agent.pk}/remove"
    )
    assert left["Location"] == "/houses/h/"
    assert world.author.agent.pk not in members(private)
    olive.post(f"/threads/{world.thread.pk}/private", {"member": [world.member.agent.pk]})
    assert Thread.objects.get(pk=world.thread.pk).visibility == "private"


def test_ctrl_k_offers_threads_you_read_and_people_to_message(world):
    dm, _ = privacy.open_direct(world.house, world.member.agent, [world.owner.agent.pk])
    mia = world.client_for(world.member).get("/threads/jump", {"q": "oli"}).json()
    assert [t["title"] for t in mia["threads"]] == ["olive"]  # the conversation, by name
    assert mia["people"] == [
        {
            "title": "Message olive",
            "house": "H",
            "url": "/houses/h/direct",
            "agent": world.owner.agent.pk,
        }
    ]
    ari = world.client_for(world.author).get("/threads/jump", {"q": "oli"}).json()
    assert ari["threads"] == []  # not theirs
    helper = world.client_for(world.author).get("/threads/jump", {"q": "help"}).json()
    assert [p["title"] for p in helper["people"]] == ["Message Helper (@helper)"]
    eve = world.client_for(world.stranger).get("/threads/jump", {"q": "oli"}).json()
    assert eve["people"] == []  # nobody of another house


def test_names_on_the_new_surfaces_are_text(world):
    agent = world.member.agent
    agent.display_name = '<img src=x onerror="alert(1)">'
    agent.save()
    olive = world.client_for(world.owner)
    house = olive.get("/houses/h/").content.decode()
    assert "<img src=x" not in house and "&lt;img src=x" in house
    dm, _ = privacy.open_direct(world.house, world.owner.agent, [agent.pk])
    page = olive.get(f"/threads/{dm.pk}/").content.decode()
    assert "<img src=x" not in page and "&lt;img src=x" in page


def test_the_live_panel_says_what_the_log_says_whether_or_not_the_table_caught_up(world):
    from threads.entries import ThreadMemberAdded, ThreadMemberRemoved
    from threads.lifecycle import new_entry
    from threads.people import people_fragment

    thread = privacy.start_private(world.house, "S", world.owner.agent, [world.member.agent.pk])
    olive = world.owner.agent.pk
    gone = new_entry(ThreadMemberRemoved(agentId=world.member.agent.pk), author=olive)
    came = new_entry(ThreadMemberAdded(agentId=world.author.agent.pk), author=olive)
    before = people_fragment(thread.pk, [gone, came])  # the table hasn't seen them yet
    privacy.remove_member(thread, world.member.agent.pk, world.owner.agent)
    privacy.add_member(thread, world.author.agent.pk, world.owner.agent)
    after = people_fragment(thread.pk, [gone, came])  # it has: the same panel
    for html in (before, after):
        assert f'data-agent="{world.member.agent.pk}"' not in html
        assert f'data-agent="{world.author.agent.pk}"' in html
        assert "2 members" in html
