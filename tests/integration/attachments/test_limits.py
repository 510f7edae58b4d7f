"""Attachment limits, checked on the bytes: never the name, never the client's header."""

import pytest

from attachments.asgi import cap_uploads
from attachments.models import Attachment
from tests.integration.attachments import files
from tests.integration.attachments.test_attachments import body_of, file_url, upload

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_png_named_txt_is_an_image(world, files_on_disk):
    up = upload(world.client_for(world.author), world.thread, files.png(20, 10), "notes.txt")
    assert up.status_code == 201
    assert up.json()["attachment"]["contentType"] == "image/png"
    assert up.json()["attachment"]["image"] == {"w": 20, "h": 10}


def test_html_named_png_is_a_download_never_inline(world, files_on_disk):
    author = world.client_for(world.author)
    up = upload(author, world.thread, files.HTML, "cat.png")
    assert up.status_code == 201
    a = up.json()["attachment"]
    assert (a["contentType"], a["image"], a["thumb"]) == ("text/html", None, None)
    got = author.get(file_url(world.thread, a["id"]))
    assert got["Content-Disposition"].startswith("attachment;")
    assert got["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in got["Content-Security-Policy"]
    assert body_of(got) == files.HTML
    assert author.get(file_url(world.thread, a["id"], "thumb")).status_code == 404


def test_svg_is_a_download(world, files_on_disk):
    author = world.client_for(world.author)
    a = upload(author, world.thread, files.SVG, "logo.svg").json()["attachment"]
    assert a["contentType"] == "image/svg+xml" and a["image"] is None
    got = author.get(file_url(world.thread, a["id"]))
    assert got["Content-Disposition"].startswith("attachment;")


def test_types_can_be_narrowed(world, files_on_disk, settings):
    settings.ARBE_ATTACHMENTS_TYPES = ["image/png", "application/pdf"]
    author = world.client_for(world.author)
    refused = upload(author, world.thread, files.SVG, "logo.png")
    assert refused.status_code == 415
    assert "image/svg+xml" in refused.json()["error"]
    assert upload(author, world.thread, files.png(), "x.bin").status_code == 201


def test_a_decompression_bomb_is_refused_without_being_decoded(world, files_on_disk):
    bomb = files.png_bomb()
    assert len(bomb) < 10_000
    refused = upload(world.client_for(world.author), world.thread, bomb, "bomb.png")
    assert refused.status_code == 413
    assert "pixels" in refused.json()["error"]
    assert not Attachment.objects.exists()


def test_the_pixel_limit_is_a_setting(world, files_on_disk, settings):
    settings.ARBE_ATTACHMENTS_MAX_PIXELS = 100
    refused = upload(world.client_for(world.author), world.thread, files.png(20, 20), "a.png")
    assert refused.status_code == 413 and "100 pixels" in refused.json()["error"]


def test_an_oversize_file_is_refused_naming_the_limit(world, files_on_disk, settings):
    settings.ARBE_ATTACHMENTS_MAX_BYTES = 1024
    refused = upload(world.client_for(world.author), world.thread, b"x" * 2048, "big.txt")
    assert refused.status_code == 413
    assert "at most 1 KB" in refused.json()["error"]
    assert not Attachment.objects.exists()


def test_a_broken_image_is_refused(world, files_on_disk):
    broken = files.png()[:60]
    refused = upload(world.client_for(world.author), world.thread, broken, "a.png")
    assert refused.status_code == 400 and "not a valid one" in refused.json()["error"]


def test_a_non_member_cannot_upload(world, files_on_disk):
    response = upload(world.client_for(world.stranger), world.thread, files.PDF, "a.pdf")
    assert response.status_code == 404
    assert upload(world.client_for(None), world.thread, files.PDF, "a.pdf").status_code == 401


async def _asgi_post(path: str, chunks: list[bytes], length: int | None):
    sent = []
    queue = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]

    async def receive():
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    headers = [(b"content-type", b"multipart/form-data; boundary=x")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    scope = {"type": "http", "method": "POST", "path": path, "headers": headers}
    await cap_uploads(_never_reads_past_the_cap)(scope, receive, send)
    return sent


async def _never_reads_past_the_cap(scope, receive, send):
    """Stands in for Django's handler: reads to the end or to a disconnect, then answers."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 201, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


@pytest.mark.parametrize("declared", [True, False])
async def test_an_upload_body_over_the_cap_is_cut_off_before_django_spools_it(settings, declared):
    settings.ARBE_ATTACHMENTS_MAX_BYTES = 1024
    chunks = [b"x" * 40_000] * 3  # over 1 KB + 64 KB of framing
    total = sum(map(len, chunks))
    sent = await _asgi_post("/api/threads/t1/attachments", chunks, total if declared else None)
    assert sent[0]["status"] == 413
    small = await _asgi_post("/api/threads/t1/attachments", [b"x" * 100], 100)
    assert small[0]["status"] == 201
