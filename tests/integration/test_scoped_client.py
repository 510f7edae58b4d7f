"""The scoped client against the app's real proxy routes (in-process, through the ASGI app)."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from arbe_site.asgi import application
from houses.models import ApiToken
from streams import errors
from streams.scoped import AsyncScopedStreamClient
from streams.transport import ASGITransport

pytestmark = pytest.mark.django_db(transaction=True)
BASE = "http://127.0.0.1"


async def scoped(world, user, thread=None) -> AsyncScopedStreamClient:
    _, token = await sync_to_async(ApiToken.issue)(user, "scoped-client")
    return AsyncScopedStreamClient(
        BASE, (thread or world.thread).id, token=token, transport=ASGITransport(application)
    )


async def test_posts_as_the_tokens_person_and_tails_from_an_offset(world):
    async with await scoped(world, world.member) as client:
        page = await client.read()
        assert [e["payload"]["type"] for e in page.entries] == ["signal.thread.created"]
        posted = await client.post_chat("through the proxy", entry_id="scoped-1")
        assert posted.entry["authorId"] == world.member.agent.id
        again = await client.post_chat("through the proxy", entry_id="scoped-1")
        assert again.offset == posted.offset  # a retry answers as the first did
        seen = []
        async for entry in client.tail(page.next_offset):
            seen.append(entry["id"])
            break
        assert seen == ["scoped-1"]


async def test_a_tail_stops_promptly_when_cancelled(world):
    async with await scoped(world, world.member) as client:
        page = await client.read()

        async def follow():
            async for _ in client.tail(page.next_offset):
                pass

        task = asyncio.create_task(follow())
        await asyncio.sleep(0.3)  # the long-poll is now waiting upstream
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)  # a guard against a hang, not a timing check


async def test_non_members_are_refused_at_once(world):
    async with await scoped(world, world.stranger) as client:
        with pytest.raises(errors.StreamError) as excinfo:
            await client.read()
        assert excinfo.value.status == 404
