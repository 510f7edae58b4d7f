"""Unread counts and the last message on the house page, kept at the append seam."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.integration.web.conftest import frame_with, house_socket, open_socket
from threads.lifecycle import create_thread
from threads.models import Thread, ThreadRead
from threads.unread import rebuild_chat_cache

pytestmark = pytest.mark.django_db(transaction=True)


def post(world, user, text, thread=None):
    thread = thread or world.thread
    response = world.client_for(user).post(f"/api/threads/{thread.id}/entries", {"text": text})
    assert response.status_code == 201
    return response.json()["entry"]["id"]


def row_html(html: str, thread_id: str) -> str:
    start = html.index(f'id="thread-{thread_id}"')
    return html[start : html.index("</li>", start)]


def house_row(world, user, thread=None) -> str:
    html = world.client_for(user).get(f"/houses/{world.house.slug}/").content.decode()
    return row_html(html, (thread or world.thread).id)


def test_chat_counts_as_unread_for_others_but_not_for_its_author(world):
    post(world, world.author, "first")
    post(world, world.author, "second   line\nwith **bold**")
    owner_row = house_row(world, world.owner)
    assert 'class="unread" title="2 unread messages">2<' in owner_row
    assert "has-unread" in owner_row
    assert '<span class="last-author">ari:</span> second line with **bold**' in owner_row
    assert "data-relative" in owner_row and "<time datetime=" in owner_row
    assert 'class="unread"' not in house_row(world, world.author)


def test_opening_the_thread_clears_its_unread_count(world):
    post(world, world.author, "hello")
    assert 'class="unread"' in house_row(world, world.owner)
    assert world.client_for(world.owner).get(f"/threads/{world.thread.id}/").status_code == 200
    assert 'class="unread"' not in house_row(world, world.owner)
    post(world, world.author, "again")
    assert '>1<span class="sr-only"> unread' in house_row(world, world.owner)


def test_unread_positions_count_chat_in_log_order_only(world):
    from threads.entries import PiCompaction
    from threads.lifecycle import new_entry
    from threads.recency import stream_writer

    post(world, world.author, "one")
    stream_writer().append(world.thread.stream_name, new_entry(PiCompaction(reason="x")))
    post(world, world.member, "two")
    thread = Thread.objects.get(pk=world.thread.pk)
    assert thread.chat_seq == 2
    reads = dict(ThreadRead.objects.filter(thread=thread).values_list("user__username", "read_seq"))
    assert reads == {"ari": 1, "mia": 2}


def test_a_retried_post_is_not_counted_twice(world):
    client = world.client_for(world.author)
    url = f"/api/threads/{world.thread.id}/entries"
    for _ in range(2):
        client.post(url, {"text": "once", "id": "client-chosen-id-1"})
    assert Thread.objects.get(pk=world.thread.pk).chat_seq == 1


def test_deleting_the_last_message_shows_the_one_before(world):
    post(world, world.author, "kept")
    gone = post(world, world.author, "regretted")
    assert "regretted" in house_row(world, world.owner)
    client = world.client_for(world.author)
    assert client.delete(f"/api/threads/{world.thread.id}/entries/{gone}").status_code == 200
    row = house_row(world, world.owner)
    assert "regretted" not in row and "kept" in row


def test_deleting_the_newest_messages_of_a_long_thread_reads_windows_not_the_log(
    world, monkeypatch
):
    import threads.reading

    ids = [post(world, world.author, f"message {n}") for n in range(80)]
    whole_reads = []
    read = threads.reading.read_entries

    def watched(thread_id, offset="-1"):
        if offset == "-1":
            whole_reads.append(thread_id)
        return read(thread_id, offset)

    monkeypatch.setattr(threads.reading, "read_entries", watched)
    client = world.client_for(world.author)
    for n in range(79, 19, -1):  # the newest 60: past the newest windows
        assert client.delete(f"/api/threads/{world.thread.id}/entries/{ids[n]}").status_code == 200
        assert Thread.objects.get(pk=world.thread.pk).last_chat_text == f"message {n - 1}"
    assert whole_reads == []


def test_a_thread_without_chat_says_so(world):
    assert "No messages yet" in house_row(world, world.owner)


def test_rebuilding_from_the_log_keeps_everyones_unread_count(world):
    for text in ("a", "b", "c"):
        post(world, world.author, text)
    world.client_for(world.owner).get(f"/threads/{world.thread.id}/")
    post(world, world.author, "d")  # owner: 1 unread; the author: none
    # A cache that lost two counts and its last message, positions shifted alike.
    Thread.objects.filter(pk=world.thread.pk).update(
        chat_seq=2, last_chat_id="", last_chat_text="", last_chat_ts=None
    )
    ThreadRead.objects.filter(thread=world.thread, user=world.owner).update(read_seq=1)
    ThreadRead.objects.filter(thread=world.thread, user=world.author).update(read_seq=2)
    assert rebuild_chat_cache(world.thread.id) == 4
    thread = Thread.objects.get(pk=world.thread.pk)
    assert thread.last_chat_text == "d"
    reads = dict(ThreadRead.objects.filter(thread=thread).values_list("user__username", "read_seq"))
    assert (reads["olive"], reads["ari"]) == (3, 4)
    assert "d" in house_row(world, world.owner)


def test_house_page_queries_do_not_grow_with_threads_or_unread(world):
    client = world.client_for(world.owner)
    url = f"/houses/{world.house.slug}/"
    post(world, world.author, "warm up")
    with CaptureQueriesContext(connection) as before:
        client.get(url)
    for i in range(4):
        thread = create_thread(house=world.house, title=f"t{i}", by=world.owner.agent)
        post(world, world.author, f"in t{i}", thread)
    with CaptureQueriesContext(connection) as after:
        html = client.get(url).content.decode()
    assert html.count('class="unread"') == 5
    assert len(after) == len(before) <= 14  # 6 of them the sidebar's


async def test_reading_in_one_tab_clears_the_house_page_in_another(world):
    await sync_to_async(post)(world, world.author, "psst")
    socket = await house_socket(world.house.slug, world.owner)
    client = await sync_to_async(world.client_for)(world.owner)
    await sync_to_async(client.get)(f"/threads/{world.thread.id}/")
    text = await frame_with(socket, f'id="thread-{world.thread.id}"')
    assert 'hx-swap-oob="true"' in text and 'class="unread"' not in text
    await socket.disconnect()


async def test_house_rows_carry_each_viewers_own_count(world):
    owner = await house_socket(world.house.slug, world.owner)
    author = await house_socket(world.house.slug, world.author)
    await sync_to_async(post)(world, world.author, "news", world.other_thread)
    owner_text = await frame_with(owner, f'id="thread-{world.other_thread.id}"')
    author_text = await frame_with(author, f'id="thread-{world.other_thread.id}"')
    assert 'class="unread"' in owner_text and "news" in owner_text
    assert 'class="unread"' not in author_text
    await owner.disconnect()
    await author.disconnect()


async def test_an_open_thread_page_reads_chat_as_it_lands(world):
    page = await open_socket(f"/ws/threads/{world.thread.id}/", world.owner)
    await frame_with(page, "offset")
    await sync_to_async(post)(world, world.author, "seen live")
    await frame_with(page, "seen live")
    row = await sync_to_async(house_row)(world, world.owner)
    assert 'class="unread"' not in row and "seen live" in row
    await page.disconnect()
    await watchers_become(world, world.owner, 0)  # a close is counted beside, not awaited
    await sync_to_async(post)(world, world.author, "after leaving")
    assert 'class="unread"' in await sync_to_async(house_row)(world, world.owner)


async def watchers_become(world, user, count: int, timeout: float = 10) -> None:
    def now():
        row = ThreadRead.objects.filter(user=user, thread=world.thread).first()
        return row.watchers if row else 0

    deadline = asyncio.get_running_loop().time() + timeout
    while (seen := await sync_to_async(now)()) != count:
        assert asyncio.get_running_loop().time() < deadline, f"{seen} watchers, not {count}"
        await asyncio.sleep(0.02)


async def test_pages_opening_and_closing_together_are_each_counted(world):
    """Sockets that open or close together are written in batches; none is lost."""
    path = f"/ws/threads/{world.thread.id}/"
    pages = await asyncio.gather(*(open_socket(path, world.owner) for _ in range(30)))
    await watchers_become(world, world.owner, 30)
    await asyncio.gather(*(page.disconnect() for page in pages[:20]))
    await watchers_become(world, world.owner, 10)
    await sync_to_async(post)(world, world.author, "the ten still open read it")
    assert 'class="unread"' not in await sync_to_async(house_row)(world, world.owner)
    await asyncio.gather(*(page.disconnect() for page in pages[20:]))
    await watchers_become(world, world.owner, 0)


async def test_every_connect_starts_with_the_whole_list_fresh(world):
    """What happened between the page's render and its socket (or while offline) is caught up."""
    await sync_to_async(post)(world, world.author, "while you were away")
    socket = await open_socket(f"/ws/houses/{world.house.slug}/", world.owner)
    snapshot = await socket.receive_from(10)
    assert snapshot.startswith('<ul id="threads" class="threads" hx-swap-oob="true">')
    row = row_html(snapshot, world.thread.id)
    assert "while you were away" in row and 'class="unread"' in row
    assert f'id="thread-{world.other_thread.id}"' in snapshot
    await socket.disconnect()
