"""A malformed multipart body is the caller's mistake: a clear 4xx naming the problem, never
a 500, and no traceback (or the hostile boundary) in the log."""

import logging

import pytest
from django.test import AsyncClient

from tests.integration.attachments import files

pytestmark = pytest.mark.django_db(transaction=True)


def body(boundary: str, headers: list[str], filename: str = "a.png") -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return (
        (
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            f"{head}Content-Type: image/png\r\n\r\n"
        ).encode()
        + files.png()
        + f"\r\n--{boundary}--\r\n".encode()
    )


LONG = "b" * 5000
CASES = {
    "long-boundary": (LONG, body(LONG, [])),
    "long-filename": ("xyz", body("xyz", [], filename="n" * 5000 + ".png")),
    "many-part-headers": ("xyz", body("xyz", [f"X-H{i}: {i}" for i in range(500)])),
    "bad-boundary-chars": ("a\x01b", body("a\x01b", [])),
    "no-boundary": ("", body("xyz", [])),
    "unterminated": ("xyz", body("xyz", [])[:-40]),
    "huge-header": ("xyz", body("xyz", ["X-Big: " + "h" * 200_000])),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("auth", ["session", "token"])
def test_a_malformed_multipart_upload_is_a_clear_4xx(world, files_on_disk, caplog, case, auth):
    boundary, raw = CASES[case]
    client = (
        world.client_for(world.author) if auth == "session" else world.token_client(world.author)
    )
    content_type = "multipart/form-data" + (f"; boundary={boundary}" if boundary else "")
    with caplog.at_level(logging.INFO):
        response = client.generic(
            "POST", f"/api/threads/{world.thread.id}/attachments", raw, content_type=content_type
        )
    assert 400 <= response.status_code < 500, (case, response.status_code, response.content)
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]
    for record in caplog.records:
        assert record.exc_info is None, (case, record.getMessage())
        assert LONG not in record.getMessage()
    assert LONG.encode() not in response.content


@pytest.mark.parametrize("case", list(CASES))
async def test_the_same_under_asgi_as_daphne_serves_it(world, files_on_disk, caplog, case):
    """Daphne takes the middleware's async branch (the parse in a worker thread): without
    the middleware these were 500s there too, which the sync client above never reaches."""
    boundary, raw = CASES[case]
    client = AsyncClient()
    await client.aforce_login(world.author)
    content_type = "multipart/form-data" + (f"; boundary={boundary}" if boundary else "")
    with caplog.at_level(logging.INFO):
        response = await client.generic(
            "POST", f"/api/threads/{world.thread.id}/attachments", raw, content_type=content_type
        )
    assert 400 <= response.status_code < 500, (case, response.status_code, response.content)
    assert response.json()["error"]
    for record in caplog.records:
        assert record.exc_info is None, (case, record.getMessage())
        assert LONG not in record.getMessage()
