"""Unread across houses (the houses page, live), from the join on, and the thread page's
"New messages" divider (docs/unread.md)."""

import re

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext

from houses.membership import add_member, join_house
from tests.factories import make_house, make_user
from tests.integration.web.conftest import frame_with, open_socket
from threads.lifecycle import create_thread

pytestmark = pytest.mark.django_db(transaction=True)


def post(world, user, text, thread=None):
    thread = thread or world.thread
    response = world.client_for(user).post(f"/api/threads/{thread.id}/entries", {"text": text})
    assert response.status_code == 201
    return response.json()["entry"]["id"]


def house_row(html: str, house) -> str:
    start = html.index(f'id="house-{house.pk}"')
    return html[start : html.index("</li>", start)]


def test_the_houses_page_shows_each_house_unread_total(world):
    post(world, world.author, "one")
    post(world, world.author, "two", thread=world.other_thread)
    post(world, world.author, "three", thread=world.other_thread)
    html = world.client_for(world.owner).get("/").content.decode()
    row = house_row(html, world.house)
    assert 'class="unread" title="3 unread messages">3<' in row and "has-unread" in row
    assert 'id="unread-total" data-unread="3"' in html  # the tab title's count
    mine = house_row(world.client_for(world.author).get("/").content.decode(), world.house)
    assert 'class="unread"' not in mine  # the author has read what they wrote


def test_the_houses_page_queries_stay_the_same_for_more_houses_and_threads(world):
    client = world.client_for(world.owner)
    client.get("/")
    with CaptureQueriesContext(connection) as one:
        client.get("/")
    for slug in ("h2", "h3", "h4"):
        house = make_house(slug, owner=world.owner, members=[world.author])
        for n in range(3):
            thread = create_thread(house=house, title=f"{slug} {n}", by=world.owner.agent)
            post(world, world.author, "news", thread=thread)
    with CaptureQueriesContext(connection) as many:
        html = client.get("/").content.decode()
    assert html.count('class="unread"') == 3
    # session, user, houses with their rollup, speaking threads, unread per house, the bell
    assert len(many) == len(one) <= 6, [q["sql"][:80] for q in many.captured_queries]


def test_a_person_who_joins_starts_at_the_tail(world):
    for n in range(5):
        post(world, world.author, f"before {n}")
    newcomer, invited = make_user("nia"), make_user("ivy")
    add_member(world.house, newcomer)
    join_house(world.house, invited)  # by an invite link
    for person in (newcomer, invited):
        html = world.client_for(person).get("/").content.decode()
        assert 'class="unread"' not in house_row(html, world.house)
    post(world, world.author, "after")
    html = world.client_for(invited).get("/").content.decode()
    assert 'title="1 unread message">1<' in house_row(html, world.house)


async def test_the_houses_page_row_and_total_follow_news_live(world):
    socket = await open_socket("/ws/home/", world.owner)
    first = await frame_with(socket, f'id="house-{world.house.pk}"')  # the snapshot
    assert 'data-unread="0"' in first
    await sync_to_async(post)(world, world.author, "are we there yet?")
    text = await frame_with(socket, 'title="1 unread message"')
    assert f'id="house-{world.house.pk}"' in text and 'hx-swap-oob="true"' in text
    assert 'data-unread="1"' in text
    # Reading the thread (in any tab) clears the row and the total.
    owner = await sync_to_async(world.client_for)(world.owner)
    await sync_to_async(owner.get)(f"/threads/{world.thread.id}/")
    text = await frame_with(socket, 'data-unread="0"')
    assert 'class="unread"' not in text
    await socket.disconnect()


async def test_the_houses_socket_needs_a_person(world):
    from tests.integration.web.conftest import closed_with

    socket = await open_socket("/ws/home/")
    assert await closed_with(socket) == 4401
    await socket.disconnect()


def test_opening_a_thread_marks_the_first_unread_message(world):
    post(world, world.owner, "already read")
    first = post(world, world.author, "new one")
    post(world, world.author, "new two")
    html = world.client_for(world.owner).get(f"/threads/{world.thread.id}/").content.decode()
    assert f'data-first-unread="{first}"' in html
    again = world.client_for(world.owner).get(f"/threads/{world.thread.id}/").content.decode()
    assert "data-first-unread" not in again  # read now
    assert re.search(r"unread\.js", again)
