"""Both stream proxies given offsets they can't use: a clean 400 JSON error, never a 5xx.

The proxies pass offsets through untouched; the stream server judges them (ASCII digits
only), and its 400 becomes the caller's.
"""

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

pytestmark = pytest.mark.django_db(transaction=True)

BAD_OFFSETS = ["", "١_١", "0_١", "0000000000000000_0000000000000001\n", "abc"]
IDS = ["empty", "arabic-indic", "mixed-digits", "trailing-newline", "letters"]


async def member_read(world, **params):
    client = AsyncClient()
    await sync_to_async(client.force_login)(world.member)
    return await client.get(f"/api/threads/{world.thread.id}/stream", params)


async def sandbox_read(world, **params):
    token = await sync_to_async(world.jwt)()
    return await AsyncClient().get(
        f"/api/stream/{world.thread.stream_name}",
        params,
        headers={"Authorization": f"Bearer {token}"},
    )


@pytest.mark.parametrize("reader", [member_read, sandbox_read], ids=["members", "sandbox"])
@pytest.mark.parametrize("offset", BAD_OFFSETS, ids=IDS)
async def test_a_bad_offset_on_a_stream_proxy_is_a_clean_400(world, reader, offset):
    for live in (None, "long-poll"):
        params = {"offset": offset} | ({"live": live} if live else {})
        response = await reader(world, **params)
        assert response.status_code == 400, (offset, live)
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"].startswith("offset:")


@pytest.mark.parametrize("reader", [member_read, sandbox_read], ids=["members", "sandbox"])
async def test_a_good_offset_still_reads_through_both_proxies(world, reader):
    response = await reader(world, offset="-1")
    assert response.status_code == 200
    assert b"signal.thread.created" in b"".join([c async for c in response.streaming_content])
    assert response["Stream-Next-Offset"].isascii()
