"""A message's files go with it: deleting the message removes their stored bytes (and the
log says so), its author may remove them and keep the message, and ``clean_attachments``
removes what a cut-short delete left behind."""

import pytest
from django.core.management import call_command

from attachments.models import Attachment
from tests.integration.attachments import files
from tests.integration.attachments.test_attachments import _stored, file_url, post_with, upload
from threads.entries import EntryDeleted, FilesPurged
from threads.lifecycle import new_entry
from threads.reading import read_entries
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def posted_files(world, client, *names):
    ids = [
        upload(client, world.thread, files.png() if n.endswith(".png") else files.PDF, n).json()[
            "attachment"
        ]["id"]
        for n in names
    ]
    entry_id = post_with(client, world.thread, ids).json()["entry"]["id"]
    return entry_id, list(Attachment.objects.filter(id__in=ids).order_by("name"))


@pytest.mark.parametrize("who", ["author", "owner"])
def test_deleting_a_message_removes_its_files_and_the_log_says_so(world, storage_kind, who):
    author = world.client_for(world.author)
    entry_id, rows = posted_files(world, author, "a.png", "b.pdf")
    assert all(_stored(r.key) for r in rows) and _stored(rows[0].thumb_key)
    deleter = author if who == "author" else world.client_for(world.owner)
    assert deleter.delete(f"/api/threads/{world.thread.id}/entries/{entry_id}").status_code == 200

    for row in rows:
        assert not _stored(row.key) and not (row.thumb_key and _stored(row.thumb_key))
        assert Attachment.objects.get(id=row.id).purged_at is not None
    tombstone, purged = read_entries(world.thread.stream_name)[0][-2:]
    assert tombstone.payload == EntryDeleted(entryId=entry_id)  # the delete first, then
    assert isinstance(purged.payload, FilesPurged) and purged.payload.entryId == entry_id
    assert sorted(purged.payload.attachmentIds) == sorted(r.id for r in rows)
    by = world.author if who == "author" else world.owner
    assert purged.authorId == tombstone.authorId == by.agent.id
    # A second delete is the same answer and removes nothing more.
    assert deleter.delete(f"/api/threads/{world.thread.id}/entries/{entry_id}").status_code == 200
    assert read_entries(world.thread.stream_name)[0][-1].id == purged.id


def test_the_author_removes_their_own_files_and_keeps_the_message(world, files_on_disk):
    author = world.client_for(world.author)
    entry_id, [row] = posted_files(world, author, "a.png")
    url = f"/api/threads/{world.thread.id}/entries/{entry_id}/files"
    assert world.client_for(world.member).delete(url).status_code == 403
    removed = author.delete(url)
    assert removed.status_code == 200, removed.content
    assert not _stored(row.key)
    last = read_entries(world.thread.stream_name)[0][-1]
    assert last.payload == FilesPurged(entryId=entry_id, attachmentIds=[row.id])
    assert last.authorId == world.author.agent.id
    assert author.get(file_url(world.thread, row.id)).status_code == 404
    assert author.delete(url).status_code == 404  # nothing left


def test_clean_attachments_removes_the_files_of_deleted_messages(world, storage_kind):
    """A tombstone appended without the delete route's after-step (a bot's, or a delete cut
    short): the sweep removes the files and records it."""
    author = world.client_for(world.author)
    entry_id, [row] = posted_files(world, author, "a.png")
    kept_id, [kept] = posted_files(world, author, "kept.png")
    tombstone = new_entry(EntryDeleted(entryId=entry_id), author=world.author.agent.id)
    stream_writer().append(world.thread.stream_name, tombstone)
    assert _stored(row.key)

    call_command("clean_attachments")

    assert not _stored(row.key) and not _stored(row.thumb_key)
    assert Attachment.objects.get(id=row.id).purged_at is not None
    last = read_entries(world.thread.stream_name)[0][-1]
    assert last.payload == FilesPurged(entryId=entry_id, attachmentIds=[row.id])
    assert last.authorId is None  # the server's sweep
    assert _stored(kept.key) and Attachment.objects.get(id=kept.id).purged_at is None
    call_command("clean_attachments")  # nothing more to do, nothing more appended
    assert read_entries(world.thread.stream_name)[0][-1].id == last.id
