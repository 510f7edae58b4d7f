"""Live reads end with the right to read (docs/security.md): signing out, deactivation, a
password change, removal from the house (or deleting the person) and revoking an API token
close the thread, house and board sockets and the proxy's SSE and long-poll reads that the
right covered, with the documented close code, and leave the others open."""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import AsyncClient, Client

from houses.membership import remove_member
from houses.models import ApiToken, Membership
from houses.revocation import NO_ACCESS, SIGNED_OUT
from houses.tokens import revoke_token
from tests.integration.web.conftest import closed_with, frame, frame_with

pytestmark = pytest.mark.django_db(transaction=True)
WAIT_S = 5  # a hang guard, not a speed bound


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


async def socket_of(client: Client, path: str) -> WebsocketCommunicator:
    """A socket through the real auth stack, on ``client``'s own session."""
    from arbe_site.asgi import application

    cookie = client.cookies["sessionid"].value
    headers = [
        (b"origin", b"http://localhost"),
        (b"host", b"localhost"),
        (b"cookie", f"sessionid={cookie}".encode()),
    ]
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    return communicator


async def live_sockets(world, client: Client) -> dict[str, WebsocketCommunicator]:
    """The thread, house and board pages' sockets, each past what it sends on connect."""
    sockets = {
        "thread": await socket_of(client, f"/ws/threads/{world.thread.id}/"),
        "house": await socket_of(client, f"/ws/houses/{world.house.slug}/"),
        "board": await socket_of(client, f"/ws/houses/{world.house.slug}/board/"),
    }
    await frame(sockets["thread"])  # the panel and the offset
    await frame_with(sockets["house"], 'id="threads"')  # the list snapshot
    return sockets


async def assert_closed(sockets: dict, code: int) -> None:
    for name, socket in sockets.items():
        assert await closed_with(socket, WAIT_S) == code, name
        await socket.disconnect()


async def assert_still_live(world, socket: WebsocketCommunicator) -> None:
    """A post still reaches ``socket``: its read was not ended."""
    client = await sync_to_async(signed_in)(world.owner)
    response = await sync_to_async(client.post)(
        f"/api/threads/{world.thread.id}/entries", {"text": "still here?"}
    )
    assert response.status_code == 201
    await frame_with(socket, "still here?", WAIT_S)


async def test_signing_out_ends_that_sessions_sockets_and_only_those(world):
    browser = await sync_to_async(signed_in)(world.member)
    other_browser = await sync_to_async(signed_in)(world.member)
    sockets = await live_sockets(world, browser)
    elsewhere = await socket_of(other_browser, f"/ws/threads/{world.thread.id}/")
    await frame(elsewhere)

    response = await sync_to_async(browser.post)("/logout/")
    assert response.status_code in (200, 302)

    await assert_closed(sockets, SIGNED_OUT)
    await assert_still_live(world, elsewhere)
    await elsewhere.disconnect()


async def test_deactivation_ends_every_socket_of_the_person(world):
    sockets = await live_sockets(world, await sync_to_async(signed_in)(world.member))
    second = await socket_of(await sync_to_async(signed_in)(world.member), "/ws/houses/h/")
    sockets["another session"] = second

    def deactivate():
        user = get_user_model().objects.get(pk=world.member.pk)
        user.is_active = False
        user.save()

    await sync_to_async(deactivate)()
    await assert_closed(sockets, SIGNED_OUT)


def admin_browser() -> Client:
    admin = get_user_model().objects.create_superuser(
        "root", "root@example.com", "pw-for-tests-only"
    )
    return signed_in(admin)


async def test_deactivation_in_the_admin_ends_the_persons_sockets(world):
    sockets = await live_sockets(world, await sync_to_async(signed_in)(world.member))
    admin = await sync_to_async(admin_browser)()
    response = await sync_to_async(admin.post)(
        f"/admin/auth/user/{world.member.pk}/change/",
        {  # the change form as saved with "Active" unticked
            "username": world.member.username,
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
            "_save": "Save",
        },
    )
    assert response.status_code == 302, response.content[-3000:]
    assert not await get_user_model().objects.filter(pk=world.member.pk, is_active=True).aexists()
    await assert_closed(sockets, SIGNED_OUT)


async def test_a_password_changed_in_the_admin_ends_the_persons_sessions(world):
    browser = await sync_to_async(signed_in)(world.member)
    sockets = await live_sockets(world, browser)
    admin = await sync_to_async(admin_browser)()
    response = await sync_to_async(admin.post)(
        f"/admin/auth/user/{world.member.pk}/password/",
        {"password1": "a-new-long-passphrase", "password2": "a-new-long-passphrase"},
    )
    assert response.status_code == 302, response.content[:2000]

    await assert_closed(sockets, SIGNED_OUT)
    # Django stops accepting the old session too: the page's next socket is refused.
    stale = await socket_of(browser, f"/ws/threads/{world.thread.id}/")
    assert await closed_with(stale, WAIT_S) == NO_ACCESS
    await stale.disconnect()


async def test_saving_the_person_unchanged_ends_nothing(world):
    browser = await sync_to_async(signed_in)(world.member)
    socket = await socket_of(browser, f"/ws/threads/{world.thread.id}/")
    await frame(socket)

    def touch():
        user = get_user_model().objects.get(pk=world.member.pk)
        user.first_name = "Mia"
        user.save()

    await sync_to_async(touch)()
    await assert_still_live(world, socket)
    await socket.disconnect()


async def test_removal_from_the_house_ends_its_thread_house_and_board_sockets(world):
    sockets = await live_sockets(world, await sync_to_async(signed_in)(world.member))
    membership = await Membership.objects.aget(house=world.house, user=world.member)
    await sync_to_async(remove_member)(membership)
    await assert_closed(sockets, NO_ACCESS)


async def test_deleting_the_person_ends_their_sockets(world):
    sockets = await live_sockets(world, await sync_to_async(signed_in)(world.member))
    await sync_to_async(get_user_model().objects.filter(pk=world.member.pk).delete)()
    # The membership goes first (a cascade), so the first event is "no longer a member".
    await assert_closed(sockets, NO_ACCESS)


async def test_removal_from_another_house_ends_nothing_here(world):
    from houses.membership import add_member

    await sync_to_async(add_member)(world.house, world.stranger)
    browser = await sync_to_async(signed_in)(world.stranger)
    socket = await socket_of(browser, f"/ws/threads/{world.thread.id}/")
    await frame(socket)
    elsewhere = await Membership.objects.select_related("house").aget(
        house__slug="elsewhere", user=world.stranger
    )
    await sync_to_async(add_member)(elsewhere.house, world.owner, "owner")
    await sync_to_async(remove_member)(elsewhere)
    await assert_still_live(world, socket)
    await socket.disconnect()


# -- the read proxy: SSE and long-poll ------------------------------------------------------


async def tail_offset(client: AsyncClient, world) -> str:
    response = await client.get(f"/api/threads/{world.thread.id}/stream", {"offset": "-1"})
    assert response.status_code == 200, response.content
    return response["Stream-Next-Offset"]


async def open_sse(client: AsyncClient, world):
    """An SSE read from the tail, its first chunk read (the stream is open and flowing)."""
    offset = await tail_offset(client, world)
    response = await client.get(
        f"/api/threads/{world.thread.id}/stream", {"offset": offset, "live": "sse"}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    chunks = aiter(response.streaming_content)
    await asyncio.wait_for(anext(chunks), WAIT_S)
    return chunks


async def drained(chunks) -> bytes:
    """The rest of the stream; returns only once it has ended."""
    return b"".join([chunk async for chunk in chunks])


class BearerClient(AsyncClient):
    """Every request with the token (the async client drops constructor headers)."""

    def __init__(self, raw: str):
        super().__init__()
        self.bearer = {"Authorization": f"Bearer {raw}"}

    def generic(self, *args, headers=None, **kwargs):
        return super().generic(*args, headers={**self.bearer, **(headers or {})}, **kwargs)


def token_client(user) -> tuple[ApiToken, AsyncClient]:
    token, raw = ApiToken.issue(user, "reader")
    return token, BearerClient(raw)


async def test_revoking_an_api_token_ends_its_sse_read_and_its_next_request_is_401(world):
    token, client = await sync_to_async(token_client)(world.member)
    _, other_client = await sync_to_async(token_client)(world.member)
    chunks = await open_sse(client, world)
    other = await open_sse(other_client, world)

    await sync_to_async(revoke_token)(world.member, token.pk)

    await asyncio.wait_for(drained(chunks), WAIT_S)
    response = await client.get(f"/api/threads/{world.thread.id}/stream", {"offset": "-1"})
    assert response.status_code == 401
    # The person's other token reads on.
    owner = await sync_to_async(signed_in)(world.owner)
    posted = await sync_to_async(owner.post)(
        f"/api/threads/{world.thread.id}/entries", {"text": "still here?"}
    )
    assert posted.status_code == 201
    await asyncio.wait_for(chunk_with(other, b"still here?"), WAIT_S)
    await other.aclose()


async def chunk_with(chunks, needle: bytes) -> bytes:
    async for chunk in chunks:
        if needle in chunk:
            return chunk
    raise AssertionError(f"the stream ended before {needle!r}")


async def test_revoking_a_token_mid_long_poll_answers_401(world):
    token, client = await sync_to_async(token_client)(world.member)
    offset = await tail_offset(client, world)
    waiting = asyncio.create_task(
        client.get(
            f"/api/threads/{world.thread.id}/stream", {"offset": offset, "live": "long-poll"}
        )
    )
    await asyncio.sleep(0.3)  # let it reach the stream server and wait there
    assert not waiting.done()
    await sync_to_async(revoke_token)(world.member, token.pk)
    response = await asyncio.wait_for(waiting, WAIT_S)
    assert response.status_code == 401
    assert "error" in json.loads(response.content)


async def test_signing_out_ends_that_sessions_sse_read(world):
    browser = AsyncClient()
    await sync_to_async(browser.force_login)(world.member)
    chunks = await open_sse(browser, world)
    await browser.post("/logout/")
    await asyncio.wait_for(drained(chunks), WAIT_S)


async def test_removal_ends_an_sse_read_and_a_long_poll_answers_404(world):
    _, client = await sync_to_async(token_client)(world.member)
    chunks = await open_sse(client, world)
    offset = await tail_offset(client, world)
    waiting = asyncio.create_task(
        client.get(
            f"/api/threads/{world.thread.id}/stream", {"offset": offset, "live": "long-poll"}
        )
    )
    await asyncio.sleep(0.3)
    membership = await Membership.objects.aget(house=world.house, user=world.member)
    await sync_to_async(remove_member)(membership)
    await asyncio.wait_for(drained(chunks), WAIT_S)
    assert (await asyncio.wait_for(waiting, WAIT_S)).status_code == 404


async def test_deactivation_ends_token_reads_too(world):
    _, client = await sync_to_async(token_client)(world.member)
    chunks = await open_sse(client, world)

    def deactivate():
        user = get_user_model().objects.get(pk=world.member.pk)
        user.is_active = False
        user.save()

    await sync_to_async(deactivate)()
    await asyncio.wait_for(drained(chunks), WAIT_S)


# -- a session running out ------------------------------------------------------------------


def expire_in(client, seconds: float) -> None:
    """Move the stored expiry of ``client``'s session, as time passing would."""
    import datetime as dt

    from django.contrib.sessions.models import Session
    from django.utils import timezone

    key = client.cookies["sessionid"].value
    ends = timezone.now() + dt.timedelta(seconds=seconds)
    assert Session.objects.filter(session_key=key).update(expire_date=ends) == 1


async def test_a_session_running_out_ends_its_sockets_and_sse_read(world):
    browser = await sync_to_async(signed_in)(world.member)
    other_browser = await sync_to_async(signed_in)(world.member)
    await sync_to_async(expire_in)(browser, 1.5)
    sockets = await live_sockets(world, browser)
    elsewhere = await socket_of(other_browser, f"/ws/threads/{world.thread.id}/")
    await frame(elsewhere)
    reader = AsyncClient()
    reader.cookies["sessionid"] = browser.cookies["sessionid"].value
    chunks = await open_sse(reader, world)

    await assert_closed(sockets, SIGNED_OUT)
    await asyncio.wait_for(drained(chunks), WAIT_S)
    response = await reader.get(f"/api/threads/{world.thread.id}/stream", {"offset": "-1"})
    assert response.status_code == 401  # as any request on it now
    await assert_still_live(world, elsewhere)  # the person's other session reads on
    await elsewhere.disconnect()


async def test_a_session_extended_before_it_runs_out_reads_on(world):
    browser = await sync_to_async(signed_in)(world.member)
    await sync_to_async(expire_in)(browser, 1.0)
    socket = await socket_of(browser, f"/ws/threads/{world.thread.id}/")
    await frame(socket)
    await sync_to_async(expire_in)(browser, 3600)  # used meanwhile: the expiry moved on
    await asyncio.sleep(1.5)  # past the first expiry: the socket looked again
    await assert_still_live(world, socket)
    await socket.disconnect()
