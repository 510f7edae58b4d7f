"""The houses page's socket ends as the thread socket does: with this session's sign-out,
deactivation or a new password, not with another session's sign-out or a revoked token."""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from houses.models import ApiToken
from houses.revocation import SIGNED_OUT
from houses.tokens import revoke_token
from tests.integration.web.conftest import closed_with, frame_with
from tests.integration.web.test_live_reads_end import WAIT_S, signed_in, socket_of

pytestmark = pytest.mark.django_db(transaction=True)


async def home_of(world, client):
    socket = await socket_of(client, "/ws/home/")
    await frame_with(socket, f'id="house-{world.house.pk}"')  # the snapshot
    return socket


async def assert_still_live(world, socket, text: str) -> None:
    """A new message still updates the house's row on ``socket``."""
    author = await sync_to_async(signed_in)(world.author)
    posted = await sync_to_async(author.post)(
        f"/api/threads/{world.thread.id}/entries", {"text": text}
    )
    assert posted.status_code == 201
    row = await frame_with(socket, f'id="house-{world.house.pk}"', WAIT_S)
    assert 'hx-swap-oob="true"' in row


async def test_another_session_signing_out_leaves_the_home_socket_open(world):
    browser = await sync_to_async(signed_in)(world.member)
    phone = await sync_to_async(signed_in)(world.member)
    home = await home_of(world, browser)
    assert (await sync_to_async(phone.post)("/logout/")).status_code in (200, 302)
    await assert_still_live(world, home, "after the phone signed out")
    # Its own session signing out ends it.
    assert (await sync_to_async(browser.post)("/logout/")).status_code in (200, 302)
    assert await closed_with(home, WAIT_S) == SIGNED_OUT
    await home.disconnect()


async def test_revoking_an_api_token_leaves_the_home_socket_open(world):
    home = await home_of(world, await sync_to_async(signed_in)(world.member))
    token, _ = await sync_to_async(ApiToken.issue)(world.member, "cli")
    await sync_to_async(revoke_token)(world.member, token.pk)
    await assert_still_live(world, home, "after the token was revoked")
    await home.disconnect()


async def test_deactivation_still_ends_the_home_socket(world):
    home = await home_of(world, await sync_to_async(signed_in)(world.member))

    def deactivate():
        user = get_user_model().objects.get(pk=world.member.pk)
        user.is_active = False
        user.save()

    await sync_to_async(deactivate)()
    assert await closed_with(home, WAIT_S) == SIGNED_OUT
    await home.disconnect()
