"""The sidebar beside house and thread pages (houses.sidebar), kept live over the page's
own socket (houses.yours_socket): rows, mention badges, other houses, the bell, notices."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext

from houses.sidebar import sidebar_context
from notify.models import ThreadMode, ThreadNotify
from tests.factories import make_house
from tests.integration.web.conftest import frame_with, open_socket
from threads.lifecycle import create_thread

pytestmark = pytest.mark.django_db(transaction=True)


def post(world, user, text, thread=None) -> str:
    thread = thread or world.thread
    response = world.client_for(user).post(f"/api/threads/{thread.id}/entries", {"text": text})
    assert response.status_code == 201
    return response.json()["entry"]["id"]


async def thread_socket(world):
    """The owner's thread page socket, past its first frame (it has joined its groups)."""
    socket = await open_socket(f"/ws/threads/{world.thread.id}/", world.owner)
    await frame_with(socket, 'id="stream-offset"')
    return socket


async def joined(group: str) -> None:
    """Wait until a socket has joined ``group``, on the in-memory layer (its ``groups``) or on
    Redis (the group's sorted set, as channels_redis keeps it)."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()

    async def members() -> int:
        if hasattr(layer, "groups"):
            return len(layer.groups.get(group) or {})
        redis = layer.connection(layer.consistent_hash(group))
        return await redis.zcard(layer._group_key(group))

    for _ in range(1000):
        if await members():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"nobody joined {group}")


def side_row(html: str, thread_id: str) -> str:
    start = html.index(f'id="side-{thread_id}"')
    return html[start : html.index("</li>", start)]


def test_the_thread_page_lists_the_house_with_counts_badges_and_the_current_one(world):
    post(world, world.member, "hi @olive", world.other_thread)
    post(world, world.member, "and more", world.other_thread)
    html = world.client_for(world.owner).get(f"/threads/{world.thread.id}/").content.decode()
    assert 'id="sidebar"' in html
    other = side_row(html, world.other_thread.id)
    assert "has-unread" in other and "has-mention" in other
    assert 'title="2 unread messages">2<' in other and ">@1<" in other
    here = side_row(html, world.thread.id)
    assert 'aria-current="page"' in here and "has-unread" not in here
    # Newest activity first.
    assert html.index(f'id="side-{world.other_thread.id}"') < html.index(
        f'id="side-{world.thread.id}"'
    )


def test_other_houses_show_their_totals_and_mentions(world):
    second = make_house("second", owner=world.member, members=[world.owner], name="Second")
    there = create_thread(house=second, title="Over there", by=world.member.agent)
    post(world, world.member, "@olive look", there)
    post(world, world.member, "also this", there)
    html = world.client_for(world.owner).get(f"/houses/{world.house.slug}/").content.decode()
    block = html[html.index('id="side-houses"') :]
    assert "Second" in block and ">@1<" in block and 'title="2 unread messages"' in block
    assert 'data-count="1"' in html  # the bell


def test_the_sidebar_pages_its_threads(world):
    for n in range(45):
        create_thread(house=world.house, title=f"Thread {n:02}", by=world.owner.agent)
    client = world.client_for(world.owner)
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    assert html.count('class="side-row') == 40 + 0  # a page of rows; other houses: none
    assert 'id="side-more"' in html
    start = html.index("?after=", html.index('id="side-more"'))
    cursor = html[start + 7 : html.index('"', start)].split("&amp;")[0]
    more = client.get(f"/houses/{world.house.slug}/sidebar?after={cursor}").content.decode()
    assert more.count('class="side-row') == 7 and 'id="side-more"' not in more
    assert client.get(f"/houses/{world.house.slug}/sidebar?after=bad").status_code == 404
    assert (
        world.client_for(world.stranger).get(f"/houses/{world.house.slug}/sidebar").status_code
        == 404
    )


def test_the_sidebar_reads_six_queries_however_many_threads_and_houses(world):
    def count() -> int:
        from houses.models import House

        house = House.objects.get(pk=world.house.pk)
        with CaptureQueriesContext(connection) as queries:
            sidebar_context(house, world.owner, world.thread.id)
        return len(queries)

    make_house("first-other", owner=world.member, members=[world.owner])
    few = count()
    for n in range(60):
        thread = create_thread(house=world.house, title=f"T{n}", by=world.owner.agent)
        post(world, world.member, f"@olive {n}", thread)
    for n in range(3):
        other = make_house(f"more{n}", owner=world.member, members=[world.owner])
        post(
            world,
            world.member,
            "@olive",
            create_thread(house=other, title="x", by=world.member.agent),
        )
    assert few == count() <= 6


async def test_a_mention_elsewhere_reaches_the_thread_page_sidebar_bell_and_a_notice(world):
    socket = await thread_socket(world)
    try:
        await sync_to_async(post)(world, world.member, "hello", world.other_thread)
        moved = await frame_with(socket, f'id="side-{world.other_thread.id}"')
        assert "has-unread" in moved
        said = await sync_to_async(post)(world, world.member, "@olive urgent", world.other_thread)
        framed = await frame_with(socket, 'id="yours-notice"')
        assert f'data-entry="{said}"' in framed and "data-silent" not in framed
        assert "Mia mentioned you in “Other”" in framed or "mentioned you in “Other”" in framed
        assert 'id="inbox-bell"' in framed and 'data-count="1"' in framed
        assert ">@1<" in framed  # the row's mention badge
    finally:
        await socket.disconnect()


async def test_a_muted_thread_still_lists_the_mention_but_its_notice_is_silent(world):
    await sync_to_async(ThreadNotify.objects.create)(
        user=world.owner, thread=world.other_thread, mode=ThreadMode.MUTE
    )
    socket = await thread_socket(world)
    try:
        await sync_to_async(post)(world, world.member, "@olive psst", world.other_thread)
        framed = await frame_with(socket, 'id="yours-notice"')
        assert "data-silent" in framed and 'data-count="1"' in framed
    finally:
        await socket.disconnect()


async def test_the_current_threads_own_news_costs_the_sidebar_nothing(world):
    socket = await thread_socket(world)
    try:
        await sync_to_async(post)(world, world.member, "in this thread")
        await sync_to_async(post)(world, world.member, "elsewhere", world.other_thread)
        while True:
            text = await socket.receive_from(5)
            assert f'id="side-{world.thread.id}"' not in text
            if f'id="side-{world.other_thread.id}"' in text:
                break
    finally:
        await socket.disconnect()


async def test_the_inbox_page_socket_lists_a_new_item_live(world):
    socket = await open_socket("/ws/home/?view=inbox", world.owner)
    try:
        first = await socket.receive_from(5)
        assert 'id="inbox-items"' in first and 'id="house-' not in first
        await sync_to_async(post)(world, world.member, "@olive over here", world.other_thread)
        framed = await frame_with(socket, "over here")
        assert 'id="yours-notice"' in framed and 'data-count="1"' in framed
        await asyncio.sleep(0)
    finally:
        await socket.disconnect()


async def test_a_deleted_mention_leaves_the_open_inbox_and_the_sidebar_badge(world):
    """Deleted messages leave the inbox live: the inbox page's list and an open thread
    page's sidebar and bell are re-rendered without it."""
    said = await sync_to_async(post)(world, world.member, "@olive oops", world.other_thread)
    inbox = await open_socket("/ws/home/?view=inbox", world.owner)
    here = await thread_socket(world)
    try:
        assert "oops" in await inbox.receive_from(5)
        await sync_to_async(
            lambda: world.client_for(world.member).delete(
                f"/api/threads/{world.other_thread.id}/entries/{said}"
            )
        )()
        framed = await frame_with(inbox, 'data-count="0"')
        assert "oops" not in framed and 'id="inbox-items"' in framed
        # The item's removal comes as one frame: the row again, the other houses, the bell.
        framed = await frame_with(here, 'data-count="0"')
        assert "mention-badge" not in side_row(framed, world.other_thread.id)
    finally:
        await inbox.disconnect()
        await here.disconnect()


def test_a_reconnected_page_gets_the_whole_sidebar_fresh(world):
    post(world, world.member, "@olive while you were away", world.other_thread)
    url = f"/houses/{world.house.slug}/sidebar?fresh=1&current={world.thread.id}"
    html = world.client_for(world.owner).get(url).content.decode()
    assert '<ul id="side-threads"' in html and 'hx-swap-oob="true"' in html
    assert ">@1<" in side_row(html, world.other_thread.id)
    assert 'aria-current="page"' in side_row(html, world.thread.id)
    assert 'id="side-houses"' in html and 'id="inbox-bell"' in html and 'data-count="1"' in html


async def test_marking_the_inbox_read_clears_every_badge_on_an_open_page(world):
    from notify.yours import mark_all_read

    await sync_to_async(post)(world, world.member, "@olive one", world.other_thread)
    socket = await thread_socket(world)
    try:
        await sync_to_async(mark_all_read)(world.owner)
        framed = await frame_with(socket, '<ul id="side-threads"')
        assert "mention-badge" not in framed and 'data-count="0"' in framed
        assert "has-unread" in side_row(framed, world.other_thread.id)  # the thread still is
    finally:
        await socket.disconnect()


async def test_a_page_without_a_socket_of_its_own_gets_the_bell_and_notices(world):
    page = await sync_to_async(lambda: world.client_for(world.owner).get("/account/"))()
    html = page.content.decode()
    assert html.count("ws-connect=") == 1 and 'ws-connect="/ws/home/?view=bar"' in html
    thread_page = await sync_to_async(
        lambda: world.client_for(world.owner).get(f"/threads/{world.thread.id}/")
    )()
    assert thread_page.content.decode().count("ws-connect=") == 1  # its own, no second
    socket = await open_socket("/ws/home/?view=bar", world.owner)
    try:
        first = await socket.receive_from(5)
        assert 'id="inbox-bell"' in first and 'id="house-' not in first
        await sync_to_async(post)(world, world.member, "@olive from anywhere", world.other_thread)
        framed = await frame_with(socket, 'id="yours-notice"')
        assert 'data-count="1"' in framed and "side-" not in framed
    finally:
        await socket.disconnect()


async def test_the_board_page_socket_carries_the_bell_and_notices(world):
    socket = await open_socket(f"/ws/houses/{world.house.slug}/board/", world.owner)
    try:
        await joined(f"inbox-{world.owner.pk}")  # past its connect (it sends nothing first)
        await sync_to_async(post)(world, world.member, "@olive on the board", world.other_thread)
        framed = await frame_with(socket, 'id="yours-notice"')
        assert 'data-count="1"' in framed
    finally:
        await socket.disconnect()
