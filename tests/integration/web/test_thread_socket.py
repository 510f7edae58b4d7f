"""The thread socket: membership, catch-up, live fragments, one upstream tail, revocation."""

import asyncio
import json
from urllib.parse import quote

import pytest
from asgiref.sync import sync_to_async

from houses.membership import remove_member
from houses.models import Membership
from tests.integration.web.conftest import closed_with, frame, frame_with, open_socket
from threads.tail_hub import hub

pytestmark = pytest.mark.django_db(transaction=True)


def post(world, user, text: str) -> dict:
    response = world.client_for(user).post(
        f"/api/threads/{world.thread.id}/entries", {"text": text}
    )
    assert response.status_code == 201, response.content
    return response.json()


def delete(world, user, entry_id: str) -> int:
    url = f"/api/threads/{world.thread.id}/entries/{entry_id}"
    return world.client_for(user).delete(url).status_code


def path(world, offset: str | None = None) -> str:
    query = f"?offset={quote(offset, safe='')}" if offset is not None else ""
    return f"/ws/threads/{world.thread.id}/{query}"


async def test_a_stranger_is_closed_with_4404(world):
    socket = await open_socket(path(world), world.stranger)
    assert await closed_with(socket) == 4404
    await socket.disconnect()
    assert hub().tail_count == 0


async def test_anonymous_is_closed_with_4404(world):
    socket = await open_socket(path(world))
    assert await closed_with(socket) == 4404
    await socket.disconnect()


async def test_an_unknown_thread_is_closed_with_4404(world):
    socket = await open_socket("/ws/threads/nope/", world.member)
    assert await closed_with(socket) == 4404
    await socket.disconnect()


async def test_catch_up_sends_only_what_follows_the_offset(world):
    first = await sync_to_async(post)(world, world.member, "first")
    second = await sync_to_async(post)(world, world.member, "second <b>")
    socket = await open_socket(path(world, first["offset"]), world.member)
    text = await frame(socket)
    assert f'id="entry-{second["entry"]["id"]}"' in text
    assert f'id="entry-{first["entry"]["id"]}"' not in text
    assert "second &lt;b&gt;" in text
    assert 'hx-swap-oob="beforeend:#entries"' in text
    assert f'data-offset="{second["offset"]}"' in text
    assert 'id="now"' in text
    await socket.disconnect()


async def test_catch_up_includes_deletions(world):
    start = await sync_to_async(post)(world, world.member, "kept")
    doomed = await sync_to_async(post)(world, world.member, "doomed")
    await sync_to_async(delete)(world, world.member, doomed["entry"]["id"])
    socket = await open_socket(path(world, start["offset"]), world.member)
    text = await frame(socket)
    # Tombstoned in the same window: never appended, and deleted if the page has it.
    assert 'hx-swap-oob="beforeend:#entries"' not in text
    assert f'<div id="entry-{doomed["entry"]["id"]}" hx-swap-oob="delete">' in text
    await socket.disconnect()


async def test_live_chat_deletion_and_current_view(world):
    head = await sync_to_async(post)(world, world.member, "hello")
    socket = await open_socket(path(world, head["offset"]), world.member)
    await frame(socket)  # the catch-up: nothing new, the panel and the offset

    posted = await sync_to_async(post)(world, world.author, "line one\nline <script>x</script>")
    entry_id = posted["entry"]["id"]
    text = await frame_with(socket, f'id="entry-{entry_id}"')
    assert 'hx-swap-oob="beforeend:#entries"' in text
    assert "line one<br>\nline &lt;script&gt;x&lt;/script&gt;" in text
    assert f'data-offset="{posted["offset"]}"' in text
    # Nobody answered yet (the director is not running here): both messages wait.
    assert "2 messages waiting" in text

    assert await sync_to_async(delete)(world, world.owner, entry_id) == 200
    text = await frame_with(socket, 'hx-swap-oob="delete"')
    assert f'<div id="entry-{entry_id}" hx-swap-oob="delete"></div>' in text
    assert "1 message waiting" in text
    await socket.disconnect()


async def test_fifty_sockets_share_one_upstream_tail(world):
    sockets = [await open_socket(path(world), world.member) for _ in range(50)]
    for socket in sockets:
        await frame(socket)
    assert hub().tail_count == 1
    assert hub().viewers(world.thread.id) == 50

    posted = await sync_to_async(post)(world, world.member, "to everyone")
    needle = f'id="entry-{posted["entry"]["id"]}"'
    texts = await asyncio.gather(*(frame_with(s, needle) for s in sockets))
    assert all(needle in t for t in texts)
    assert hub().tail_count == 1

    for socket in sockets:
        await socket.disconnect()
    await asyncio.sleep(0)
    assert hub().tail_count == 0


async def test_two_threads_two_tails(world):
    other = f"/ws/threads/{world.other_thread.id}/"
    a, b = await open_socket(path(world), world.member), await open_socket(other, world.member)
    await frame(a), await frame(b)
    assert hub().tail_count == 2
    await a.disconnect()
    assert hub().tail_count == 1
    await b.disconnect()


async def test_revoking_membership_closes_the_socket(world):
    socket = await open_socket(path(world), world.member)
    await frame(socket)
    membership = await Membership.objects.aget(house=world.house, user=world.member)
    await sync_to_async(remove_member)(membership)
    assert await closed_with(socket) == 4404
    await socket.disconnect()


async def test_a_bad_offset_closes_with_4400(world):
    socket = await open_socket(path(world, "not-an-offset"), world.member)
    assert await closed_with(socket) == 4400
    await socket.disconnect()


def test_the_catch_up_frame_is_html_not_json(world):
    # htmx's ws extension swaps only top-level HTML elements; JSON would swap nothing.
    head = post(world, world.member, "x")

    async def first_frame():
        socket = await open_socket(path(world, head["offset"]), world.member)
        text = await frame(socket)
        await socket.disconnect()
        return text

    text = asyncio.run(first_frame())
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)


async def test_a_long_catch_up_comes_in_frames_under_the_size_limit(world, monkeypatch):
    """Daphne refuses frames over 1 MiB; the offset comes only with the last frame."""
    from threads import consumers

    monkeypatch.setattr(consumers, "CATCH_UP_FRAME_CHARS", 3000)
    start = await sync_to_async(post)(world, world.member, "start")
    ids = [
        (await sync_to_async(post)(world, world.member, "x" * 500))["entry"]["id"]
        for _ in range(12)
    ]
    socket = await open_socket(path(world, start["offset"]), world.member)
    frames = [await frame(socket)]
    while "stream-offset" not in frames[-1]:
        frames.append(await frame(socket))
    assert len(frames) > 1
    assert all(len(f) <= 3000 for f in frames[:-1])
    assert all("stream-offset" not in f for f in frames[:-1])
    text = "".join(frames)
    assert [text.count(f'id="entry-{i}"') for i in ids] == [1] * len(ids)
    await socket.disconnect()


async def test_a_panel_refresh_counts_its_frames_like_entries_do(world):
    from ops.metrics import REGISTRY

    def frames() -> float:
        return sum(
            REGISTRY.get_sample_value("arbe_fanout_frames_total", {"path": p}) or 0.0
            for p in ("direct", "queued")
        )

    sockets = [await open_socket(path(world), world.member) for _ in range(2)]
    for socket in sockets:
        await frame(socket)
    tail = hub().tails[world.thread.id]
    before = frames()
    tail.panel = ""  # as if the view moved on with time: the next derive differs
    await tail.refresh_now()
    assert frames() == before + 2  # one panel frame per socket, counted
    for socket in sockets:
        await frame(socket)  # and each socket has it
        await socket.disconnect()
