"""Private threads over sockets and live reads: a house member who isn't in one is refused its
socket as for a thread that doesn't exist, hears nothing of it on the house, houses and
thread pages' sockets, and someone removed from one loses their live reads of it (4404 on
the socket, the SSE read ended, a long-poll answered 404) while the others read on."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from arbe_lib.ids import random_id
from houses.revocation import NO_ACCESS
from tests.integration.web.conftest import closed_with, frame, frame_with, open_socket
from tests.integration.web.test_live_reads_end import (
    WAIT_S,
    drained,
    signed_in,
    socket_of,
    token_client,
)
from threads import privacy

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def salaries(world):
    return privacy.start_private(
        world.house, "Salaries", world.owner.agent, [world.member.agent.pk]
    )


def post(world, user, thread, text: str) -> None:
    response = signed_in(user).post(f"/api/threads/{thread.id}/entries", {"text": text})
    assert response.status_code == 201, response.content


async def test_the_thread_socket_refuses_an_outsider_as_for_a_missing_thread(world, salaries):
    closes = []
    for thread_id in (salaries.id, random_id(10)):
        socket = await open_socket(f"/ws/threads/{thread_id}/", world.author)
        closes.append(await closed_with(socket, WAIT_S))
        await socket.disconnect()
    assert closes == [NO_ACCESS, NO_ACCESS]


async def frames_until(socket, needle: str) -> str:
    """Every frame up to and including the first with ``needle``."""
    seen = ""
    while needle not in seen:
        seen += await socket.receive_from(WAIT_S)
    return seen


@pytest.mark.parametrize("page", ["house", "home", "thread"])
async def test_house_events_of_a_private_thread_reach_its_members_only(world, salaries, page):
    path = {
        "house": f"/ws/houses/{world.house.slug}/",
        "home": "/ws/home/",
        "thread": f"/ws/threads/{world.other_thread.id}/",  # its sidebar
    }[page]
    sockets = {}
    for name, user in (("member", world.member), ("outsider", world.author)):
        sockets[name] = await open_socket(path, user)
        await frame(sockets[name], 10)  # what a connect starts with
        if page == "home":
            await frame(sockets[name], 10)  # the rows, then the bell
    await sync_to_async(post)(world, world.owner, salaries, "secret figures")
    # The members' pages hear of it (the houses page: the house's row, its unread count).
    member_marker = f"house-{world.house.pk}" if page == "home" else salaries.id
    await frames_until(sockets["member"], member_marker)
    await sync_to_async(post)(world, world.owner, world.thread, "open news")
    # Events reach a socket in order: once the open thread's news came, the private one's
    # would have come before it.
    marker = 'data-unread="1"' if page == "home" else world.thread.id
    heard = await frames_until(sockets["outsider"], marker)
    assert salaries.id not in heard and "Salaries" not in heard
    if page == "home":  # no frame but the open news's (a leak would count 0 unread first)
        assert 'data-unread="0"' not in heard
    for socket in sockets.values():
        await socket.disconnect()


async def test_removal_ends_their_reads_of_it_within_seconds_while_others_read_on(world, salaries):
    member = await sync_to_async(signed_in)(world.member)
    thread_socket = await socket_of(member, f"/ws/threads/{salaries.id}/")
    await frame(thread_socket)
    house_socket = await socket_of(member, f"/ws/houses/{world.house.slug}/")
    assert "Salaries" in await frame_with(house_socket, 'id="threads"')
    owner_socket = await socket_of(
        await sync_to_async(signed_in)(world.owner), f"/ws/threads/{salaries.id}/"
    )
    await frame(owner_socket)
    _, client = await sync_to_async(token_client)(world.member)
    path = f"/api/threads/{salaries.id}/stream"
    head = await client.get(path, {"offset": "-1"})
    offset = head["Stream-Next-Offset"]
    sse = await client.get(path, {"offset": offset, "live": "sse"})
    chunks = aiter(sse.streaming_content)
    await asyncio.wait_for(anext(chunks), WAIT_S)
    waiting = asyncio.create_task(client.get(path, {"offset": offset, "live": "long-poll"}))
    await asyncio.sleep(0.3)  # at the stream server, waiting
    assert not waiting.done()

    removed = sync_to_async(privacy.remove_member)
    assert await removed(salaries, world.member.agent.pk, world.owner.agent)

    assert await closed_with(thread_socket, WAIT_S) == NO_ACCESS
    await asyncio.wait_for(drained(chunks), WAIT_S)
    # The long-poll is answered: 404, or, when the removal's own append woke it before the
    # table changed, its 200 with the body cut off there (at most that entry); either way
    # the next read is refused as for a missing thread.
    answer = await asyncio.wait_for(waiting, WAIT_S)
    if answer.status_code == 200:
        body = b"".join([chunk async for chunk in answer.streaming_content])
        assert body in (b"", b"[]") or b"signal.thread.member_removed" in body, body[:300]
        assert b'"chat"' not in body
    else:
        assert answer.status_code == 404
    assert (await client.get(path, {"offset": offset})).status_code == 404
    # The house page stays open and its list is drawn again without the thread.
    assert "Salaries" not in await frame_with(house_socket, 'id="threads"')
    # The owner reads on.
    await sync_to_async(post)(world, world.owner, salaries, "still here?")
    await frame_with(owner_socket, "still here?", WAIT_S)
    again = await socket_of(member, f"/ws/threads/{salaries.id}/")
    assert await closed_with(again, WAIT_S) == NO_ACCESS
    for socket in (thread_socket, house_socket, owner_socket, again):
        await socket.disconnect()


async def test_an_open_thread_made_private_ends_the_reads_of_those_left_out(world):
    """Ari had the open thread open; it is made private without him: his socket closes 4404
    and his house page drops its row, while Mia, who is in it, reads on."""
    ari = await sync_to_async(signed_in)(world.author)
    ari_thread = await socket_of(ari, f"/ws/threads/{world.thread.id}/")
    await frame(ari_thread)
    ari_house = await socket_of(ari, f"/ws/houses/{world.house.slug}/")
    assert "Plans" in await frame_with(ari_house, 'id="threads"')
    mia = await socket_of(
        await sync_to_async(signed_in)(world.member), f"/ws/threads/{world.thread.id}/"
    )
    await frame(mia)

    made = sync_to_async(privacy.make_private)
    await made(world.thread, world.owner.agent, [world.member.agent.pk])

    assert await closed_with(ari_thread, WAIT_S) == NO_ACCESS
    assert "Plans" not in await frame_with(ari_house, 'id="threads"')
    await sync_to_async(post)(world, world.owner, world.thread, "members only now")
    await frame_with(mia, "members only now", WAIT_S)
    for socket in (ari_thread, ari_house, mia):
        await socket.disconnect()
