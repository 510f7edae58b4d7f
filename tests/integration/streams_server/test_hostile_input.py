"""The embedded server given what a careless or hostile client sends: names that can't go in
a header, offsets in other scripts' digits, a forged ``Host``. Each is a 400 (or a safe
answer), never an exception, and nothing is created. The app is called in-process against
the test database, so what was stored can be checked."""

import uuid

import httpx
import pytest

from streams.models import Stream
from streams.server import create_app
from streams.transport import ASGITransport

pytestmark = [pytest.mark.timeout(30, func_only=True), pytest.mark.django_db(transaction=True)]

BASE = "http://streams.internal:4437"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
async def client():
    app = create_app(secret=None, long_poll_ms=500, base_url=BASE)
    transport = ASGITransport(app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield client


@pytest.fixture
async def stream(client) -> str:
    path = f"/v1/stream/test/{uuid.uuid4().hex}"
    assert (await client.put(path, headers=JSON)).status_code == 201
    assert (await client.post(path, json={"n": 1})).status_code == 204
    return path


async def stream_names() -> set[str]:
    return {name async for name in Stream.objects.values_list("name", flat=True)}


@pytest.mark.parametrize(
    "name",
    ["x%00y", "x%0Ay", "x%0D%0ALocation:%20evil", "x%7Fy", "x%C2%85y", "%E6%97%A5%E6%9C%AC"],
    ids=["nul", "newline", "crlf", "del", "c1-control", "non-latin-1"],
)
async def test_a_stream_name_that_cannot_go_in_a_header_is_400_before_anything_is_created(
    client, name
):
    before = await stream_names()
    response = await client.put(f"/v1/stream/{name}", headers=JSON, content=b'{"a":1}')
    assert response.status_code == 400
    assert "stream name" in response.text
    assert "location" not in response.headers
    for method in ("POST", "GET", "HEAD", "DELETE"):
        answer = await client.request(method, f"/v1/stream/{name}", headers=JSON, content=b"{}")
        assert answer.status_code == 400, method
    assert await stream_names() == before


async def test_location_is_built_from_the_configured_base_never_the_request_host(client):
    name = f"test/{uuid.uuid4().hex}/café"
    response = await client.put(f"/v1/stream/{name}", headers={**JSON, "Host": "attacker.example"})
    assert response.status_code == 201
    location = response.headers["location"]
    # Percent-encoded: ASCII whatever the (Latin-1) name holds.
    assert location == f"{BASE}/v1/stream/{name.replace('é', '%C3%A9')}"
    assert "attacker" not in location
    assert name in await stream_names()


@pytest.mark.parametrize(
    "offset",
    ["١_١", "٠٠٠٠_٠٠٠٠", "0_١", "²_1", "0000000000000000_0000000000000001\n", " 0_1", "0_1 "],
    ids=["arabic-indic", "arabic-indic-zeros", "mixed", "superscript", "newline", "lead", "trail"],
)
async def test_an_offset_of_other_than_ascii_digits_is_400(client, stream, offset):
    response = await client.get(stream, params={"offset": offset})
    assert response.status_code == 400
    assert "etag" not in response.headers
    long_poll = await client.get(stream, params={"offset": offset, "live": "long-poll"})
    assert long_poll.status_code == 400


@pytest.mark.parametrize("cursor", ["١٢٣", "²", "-5", "1e9", "x"])
async def test_a_cursor_of_other_than_ascii_digits_gets_a_fresh_one(client, stream, cursor):
    tail = (await client.head(stream)).headers["Stream-Next-Offset"]
    await client.post(stream, json={"n": 2})
    response = await client.get(
        stream, params={"offset": tail, "live": "long-poll", "cursor": cursor}
    )
    assert response.status_code == 200
    assert response.headers["Stream-Cursor"].isascii()
    assert response.headers["Stream-Cursor"].isdigit()


async def test_a_fork_offset_in_other_digits_is_400_and_creates_nothing(client, stream):
    before = await stream_names()
    response = await client.put(
        f"/v1/stream/test/{uuid.uuid4().hex}",
        headers={
            **JSON,
            "Stream-Forked-From": stream,
            "Stream-Fork-Offset": "0_\u00b2".encode("latin-1"),
        },
    )
    assert response.status_code == 400
    assert await stream_names() == before


HUGE = "9" * 5000  # int() refuses more than 4,300 digits: a ValueError, not a ProtocolError
LARGE = "9" * 25  # beyond 64-bit columns


@pytest.mark.parametrize("digits", [HUGE, LARGE], ids=["5000-digits", "25-digits"])
async def test_an_enormous_number_is_a_4xx_not_a_crash(client, stream, digits):
    before = await stream_names()
    fresh = f"/v1/stream/test/{uuid.uuid4().hex}"
    assert (await client.put(fresh, headers={**JSON, "Stream-TTL": digits})).status_code == 400
    forked = {**JSON, "Stream-Forked-From": stream}
    answer = await client.put(fresh, headers={**forked, "Stream-Fork-Sub-Offset": digits})
    assert answer.status_code == 400
    answer = await client.put(fresh, headers={**forked, "Stream-Fork-Offset": f"0_{digits}"})
    assert answer.status_code in (400, 409)
    assert await stream_names() == before
    producer = {**JSON, "Producer-Id": "p", "Producer-Epoch": digits, "Producer-Seq": "0"}
    assert (await client.post(stream, json={"n": 3}, headers=producer)).status_code == 400
    read = await client.get(stream, params={"offset": f"0_{digits}"})
    assert read.status_code in (200, 400)
    cursor = await client.get(
        stream,
        params={"offset": (await client.head(stream)).headers["Stream-Next-Offset"],
                "live": "long-poll", "cursor": digits},
    )  # fmt: skip
    assert cursor.status_code == 204 and cursor.headers["Stream-Cursor"].isdigit()


@pytest.mark.parametrize("value", ["", "x", "-5", "1.5", "١٢٣", "9" * 20])
async def test_a_page_size_that_is_not_a_whole_number_is_a_400(client, stream, value):
    response = await client.get(stream, params={"offset": "-1", "arbe_page_bytes": value})
    assert response.status_code == 400
    assert "arbe_page_bytes" in response.text


async def test_a_smaller_page_reads_the_same_messages_in_more_pages(client):
    path = f"/v1/stream/test/{uuid.uuid4().hex}"
    assert (await client.put(path, headers=JSON)).status_code == 201
    for n in range(40):
        assert (await client.post(path, json={"n": n, "pad": "x" * 500})).status_code == 204
    seen, offset, pages = [], "-1", 0
    while True:
        response = await client.get(path, params={"offset": offset, "arbe_page_bytes": "4096"})
        assert response.status_code == 200
        seen += [m["n"] for m in response.json()]
        offset, pages = response.headers["Stream-Next-Offset"], pages + 1
        if response.headers.get("Stream-Up-To-Date") == "true":
            break
    assert seen == list(range(40))
    assert pages >= 4  # 40 × ~520 bytes in pages of at least 4 KiB, and not one page
    whole = await client.get(path, params={"offset": "-1"})
    assert [m["n"] for m in whole.json()] == seen
