"""Attachments end to end through the API, on the filesystem and on a real S3-compatible
server: upload, post, serve to members only, hidden by a tombstone, purged by an owner,
found by name in search."""

import json

import pytest

from attachments.models import Attachment
from tests.integration.attachments import files
from threads.entries import Chat, FilesPurged
from threads.reading import read_entries

pytestmark = pytest.mark.django_db(transaction=True)


def upload(client, thread, data: bytes, name: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return client.post(
        f"/api/threads/{thread.id}/attachments",
        {"file": SimpleUploadedFile(name, data, content_type="application/octet-stream")},
    )


def post_with(client, thread, ids, text="see attached", **extra):
    return client.post(
        f"/api/threads/{thread.id}/entries",
        json.dumps({"payload": {"type": "chat", "text": text, "attachments": ids}, **extra}),
        content_type="application/json",
    )


def file_url(thread, attachment_id, part="file"):
    return f"/attachments/{thread.id}/{attachment_id}/{part}"


def body_of(response) -> bytes:
    return b"".join(response.streaming_content)


def test_upload_post_serve_to_members_and_hide_on_delete(world, storage_kind, request):
    author = world.client_for(world.author)
    image = files.png(300, 200)
    up = upload(author, world.thread, image, "screen shot.png")
    assert up.status_code == 201, up.content
    a = up.json()["attachment"]
    if storage_kind == "s3":  # the bytes really are in the bucket, under the house's prefix
        from tests.integration.attachments.conftest import BUCKET

        listed = request.getfixturevalue("files_on_s3").list_objects_v2(Bucket=BUCKET)
        keys = [o["Key"] for o in listed["Contents"]]
        assert f"attachments/{world.house.id}/{a['id']}/file" in keys
    assert (a["contentType"], a["image"], a["size"]) == (
        "image/png",
        {"w": 300, "h": 200},
        len(image),
    )
    doc = upload(author, world.thread, files.PDF, "notes.pdf").json()["attachment"]

    # Before the post, only the uploader may fetch it.
    assert author.get(file_url(world.thread, a["id"])).status_code == 200
    assert world.client_for(world.member).get(file_url(world.thread, a["id"])).status_code == 404

    posted = post_with(author, world.thread, [a["id"], doc["id"]])
    assert posted.status_code == 201, posted.content
    entry = read_entries(world.thread.stream_name)[0][-1]
    assert isinstance(entry.payload, Chat)
    refs = entry.payload.attachments
    assert [(r.id, r.name, r.contentType) for r in refs] == [
        (a["id"], "screen shot.png", "image/png"),
        (doc["id"], "notes.pdf", "application/pdf"),
    ]
    assert (refs[0].image.w, refs[0].image.h) == (300, 200) and refs[1].image is None

    member = world.client_for(world.member)
    got = member.get(file_url(world.thread, a["id"]))
    assert got.status_code == 200 and body_of(got) == image
    assert got["Content-Type"] == "image/png"
    assert got["Content-Disposition"].startswith("inline;")
    assert got["X-Content-Type-Options"] == "nosniff"
    assert got["Cache-Control"].startswith("private")
    thumb = member.get(file_url(world.thread, a["id"], "thumb"))
    assert thumb.status_code == 200 and thumb["Content-Type"] in ("image/png", "image/jpeg")
    pdf = member.get(file_url(world.thread, doc["id"]))
    assert pdf["Content-Disposition"].startswith("attachment;") and body_of(pdf) == files.PDF
    download = member.get(file_url(world.thread, a["id"]) + "?download=1")
    assert download["Content-Disposition"].startswith("attachment;")

    # A stranger (member of another house) and an anonymous caller learn nothing.
    assert world.client_for(world.stranger).get(file_url(world.thread, a["id"])).status_code == 404
    assert world.client_for(None).get(file_url(world.thread, a["id"])).status_code == 404
    # Nor through another thread's URL.
    assert member.get(file_url(world.other_thread, a["id"])).status_code == 404

    # The tombstone hides the files from members; the log keeps the record.
    gone = author.delete(f"/api/threads/{world.thread.id}/entries/{entry.id}")
    assert gone.status_code == 200
    for who in (member, author, world.client_for(world.owner)):
        assert who.get(file_url(world.thread, a["id"])).status_code == 404
        assert who.get(file_url(world.thread, a["id"], "thumb")).status_code == 404
    raw = [e for e in read_entries(world.thread.stream_name)[0] if e.id == entry.id]
    assert raw[0].payload.attachments == refs


def test_only_the_uploader_may_post_an_upload_and_only_once(world, files_on_disk):
    author = world.client_for(world.author)
    a = upload(author, world.thread, files.png(), "a.png").json()["attachment"]
    # Another member can't post someone else's upload: it is not theirs (404).
    assert post_with(world.client_for(world.member), world.thread, [a["id"]]).status_code == 404
    assert post_with(author, world.thread, [a["id"]]).status_code == 201
    # A second message can't carry it again.
    again = post_with(author, world.thread, [a["id"]], text="again")
    assert again.status_code == 409 and "another message" in again.json()["error"]
    # Nor can it appear in another thread.
    b = upload(author, world.thread, files.png(), "b.png").json()["attachment"]
    assert post_with(author, world.other_thread, [b["id"]]).status_code == 404


def test_client_supplied_refs_are_replaced_by_what_the_server_stored(world, files_on_disk):
    author = world.client_for(world.author)
    a = upload(author, world.thread, files.png(10, 10), "real.png").json()["attachment"]
    forged = {"id": a["id"], "name": "forged.exe", "size": 1, "contentType": "text/html"}
    assert post_with(author, world.thread, [forged], text="").status_code == 201
    ref = read_entries(world.thread.stream_name)[0][-1].payload.attachments[0]
    assert (ref.name, ref.size, ref.contentType) == ("real.png", a["size"], "image/png")


def test_the_form_posts_files_alone(world, files_on_disk):
    author = world.client_for(world.author)
    a = upload(author, world.thread, files.PDF, "plan.pdf").json()["attachment"]
    response = author.post(
        f"/api/threads/{world.thread.id}/entries", {"text": "", "attachment": [a["id"]]}
    )
    assert response.status_code == 201, response.content
    payload = read_entries(world.thread.stream_name)[0][-1].payload
    assert payload.text == "" and payload.attachments[0].name == "plan.pdf"
    # Neither text nor files: refused.
    empty = author.post(f"/api/threads/{world.thread.id}/entries", {"text": ""})
    assert empty.status_code == 400


def test_count_limit_per_message(world, files_on_disk, settings):
    settings.ARBE_ATTACHMENTS_MAX_PER_MESSAGE = 2
    author = world.client_for(world.author)
    ids = [
        upload(author, world.thread, files.PDF, f"{i}.pdf").json()["attachment"]["id"]
        for i in range(3)
    ]
    refused = post_with(author, world.thread, ids)
    assert refused.status_code == 400 and "at most 2 files" in refused.json()["error"]


def test_owner_purges_the_bytes_and_the_log_says_so(world, storage_kind):
    author = world.client_for(world.author)
    a = upload(author, world.thread, files.png(), "a.png").json()["attachment"]
    entry_id = post_with(author, world.thread, [a["id"]]).json()["entry"]["id"]
    url = f"/api/threads/{world.thread.id}/entries/{entry_id}/files"
    refused = world.client_for(world.member).delete(url)  # not theirs, not an owner
    assert refused.status_code == 403, refused.content
    assert world.client_for(world.stranger).delete(url).status_code == 404
    owner = world.client_for(world.owner)
    assert owner.delete(url).status_code == 200
    last = read_entries(world.thread.stream_name)[0][-1]
    assert last.payload == FilesPurged(entryId=entry_id, attachmentIds=[a["id"]])
    assert last.authorId == world.owner.agent.id
    row = Attachment.objects.get(id=a["id"])
    assert row.purged_at is not None
    assert not _stored(row.key)
    assert owner.get(file_url(world.thread, a["id"])).status_code == 404
    assert owner.delete(url).status_code == 404  # nothing left to purge


def _stored(key: str) -> bool:
    from django.core.files.storage import storages

    return storages["attachments"].exists(key)


def test_files_on_disk_are_owner_only(world, files_on_disk):
    author = world.client_for(world.author)
    a = upload(author, world.thread, files.png(), "a.png").json()["attachment"]
    row = Attachment.objects.get(id=a["id"])
    path = files_on_disk / row.key
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_search_finds_a_message_by_its_file_name(world, files_on_disk):
    author = world.client_for(world.author)
    a = upload(author, world.thread, files.PDF, "quarterly-roadmap.pdf").json()["attachment"]
    post_with(author, world.thread, [a["id"]], text="here it is")
    found = world.client_for(world.member).get("/api/search", {"q": "roadmap"})
    assert found.status_code == 200, found.content
    assert [r["entryId"] for r in found.json()["results"]] == [
        read_entries(world.thread.stream_name)[0][-1].id
    ]
    assert (
        world.client_for(world.stranger).get("/api/search", {"q": "roadmap"}).json()["results"]
        == []
    )


def test_a_bot_attaches_only_its_own_uploads_through_the_sandbox(world, files_on_disk):
    """The sandbox proxy links a bot's chat files as a post does: its own uploads in this
    thread (a run's files, dispatch.run_files), with the server's refs, not the claimed ones."""
    from attachments.service import store_upload

    bot = world.jwt_client(world.jwt())
    theirs = upload(world.client_for(world.author), world.thread, files.png(), "a.png")
    own = store_upload(world.thread, world.bot.id, "chart.png", files.png())

    def send(entry_id, attachment_id):
        lie = {"id": attachment_id, "name": "x.exe", "size": 1, "contentType": "text/html"}
        entry = {
            "id": entry_id,
            "payload": {"type": "chat", "text": "look", "attachments": [lie]},
            "authorId": world.bot.id,
        }
        return bot.post(
            f"/api/stream/{world.thread.stream_name}",
            json.dumps(entry),
            content_type="application/json",
        )

    refused = send("bot-files-1", theirs.json()["attachment"]["id"])
    assert refused.status_code == 404, refused.content
    assert Attachment.objects.get(id=theirs.json()["attachment"]["id"]).entry_id == ""
    sent = send("bot-files-2", own.id)
    assert sent.status_code == 200, sent.content
    [ref] = sent.json()["entries"][0]["payload"]["attachments"]
    assert (ref["name"], ref["contentType"], ref["size"]) == ("chart.png", "image/png", own.size)
    reader = world.client_for(world.member)
    assert reader.get(file_url(world.thread, own.id)).status_code == 200
    again = send("bot-files-3", own.id)  # one message carries a file
    assert again.status_code == 409, again.content


def test_uploads_no_message_took_are_cleaned_later(world, storage_kind):
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    author = world.client_for(world.author)
    kept = upload(author, world.thread, files.png(), "kept.png").json()["attachment"]
    post_with(author, world.thread, [kept["id"]])
    left = upload(author, world.thread, files.png(), "left.png").json()["attachment"]
    fresh = upload(author, world.thread, files.PDF, "fresh.pdf").json()["attachment"]
    old = timezone.now() - timedelta(days=2)
    Attachment.objects.exclude(id=fresh["id"]).update(created_at=old)
    left_row = Attachment.objects.get(id=left["id"])
    call_command("clean_attachments")
    assert set(Attachment.objects.values_list("id", flat=True)) == {kept["id"], fresh["id"]}
    assert not _stored(left_row.key) and not _stored(left_row.thumb_key)
    assert author.get(file_url(world.thread, kept["id"])).status_code == 200
