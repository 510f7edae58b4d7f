"""Deleted chat is not unread (issue 32, finding 5): on the row, in the house's total and on
the houses page, with the list pages' query counts unchanged by deletions."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.integration.web.test_unread import house_row, post
from threads import entries as E
from threads.lifecycle import create_thread, new_entry
from threads.models import ThreadRead
from threads.unread import house_unread

pytestmark = pytest.mark.django_db(transaction=True)


def delete(world, entry_id, thread=None):
    thread = thread or world.thread
    url = f"/api/threads/{thread.id}/entries/{entry_id}"
    assert world.client_for(world.author).delete(url).status_code == 200


def test_a_deleted_message_no_longer_counts_as_unread(world):
    post(world, world.author, "one")
    gone = post(world, world.author, "two")
    post(world, world.author, "three")
    assert 'title="3 unread messages">3<' in house_row(world, world.owner)
    delete(world, gone)
    assert 'title="2 unread messages">2<' in house_row(world, world.owner)
    assert house_unread(world.owner, [world.house.pk]) == {world.house.pk: 2}
    home = world.client_for(world.owner).get("/").content.decode()
    assert 'title="2 unread messages">2<' in home


def test_a_deleted_message_already_read_changes_nothing(world):
    first = post(world, world.author, "one")
    post(world, world.author, "two")
    post(world, world.author, "three")
    ThreadRead.objects.update_or_create(
        user=world.owner, thread=world.thread, defaults={"read_seq": 1}
    )
    delete(world, first)  # read already: the two after it are still unread
    assert 'title="2 unread messages">2<' in house_row(world, world.owner)
    assert house_unread(world.owner, [world.house.pk]) == {world.house.pk: 2}


def test_a_thread_whose_unread_were_all_deleted_shows_none(world):
    gone = post(world, world.author, "oops")
    delete(world, gone)
    assert 'class="unread"' not in house_row(world, world.owner)
    assert house_unread(world.owner, [world.house.pk]) == {world.house.pk: 0}


def test_list_queries_do_not_grow_with_deleted_chat(world):
    client = world.client_for(world.owner)
    url = f"/houses/{world.house.slug}/"
    post(world, world.author, "warm up")
    with CaptureQueriesContext(connection) as before:
        client.get(url)
    with CaptureQueriesContext(connection) as home_before:
        client.get("/")
    for i in range(4):
        thread = create_thread(house=world.house, title=f"t{i}", by=world.owner.agent)
        for n in range(3):
            entry_id = post(world, world.author, f"in t{i} #{n}", thread)
            if n:
                delete(world, entry_id, thread)
    with CaptureQueriesContext(connection) as after:
        html = client.get(url).content.decode()
    with CaptureQueriesContext(connection) as home_after:
        client.get("/")
    # five threads (and the warm-up's), each in the list and in the sidebar
    assert html.count('title="1 unread message">1<') == 10
    assert len(after) == len(before)
    assert len(home_after) == len(home_before)


async def test_an_open_house_page_drops_a_deleted_message_from_its_count(world):
    from asgiref.sync import sync_to_async

    from tests.integration.web.conftest import frame_with, house_socket
    from threads.recency import stream_writer, throttle

    await sync_to_async(post)(world, world.author, "keep")
    gone = await sync_to_async(post)(world, world.author, "regret")
    # The director passed over both: the status record won't move with the deletion.
    outcome = new_entry(E.DirectorOutcome(upTo=gone, picked=[]))
    await sync_to_async(stream_writer().append)(world.thread.stream_name, outcome)
    socket = await house_socket(world.house.slug, world.owner)
    throttle.reset()  # a fresh recency window: the tombstone's row is announced at once
    await sync_to_async(delete)(world, gone)
    text = await frame_with(socket, 'title="1 unread message">1<')
    assert f'id="thread-{world.thread.id}"' in text
    await socket.disconnect()
