"""Uploading, linking, serving and purging attachments: the only writers of their rows.

Upload first: a row per file, owned by its uploader and house, not linked to anything.
A post then names the upload ids; ``claim`` checks they are the poster's own unlinked
uploads in this thread and links them to the entry being written, and the entry carries
their ``AttachmentRef``s as the server knows them. A file is served while the entry that
carries it stands: its tombstone hides it (404) everywhere, and its bytes go with it (the
delete's after-step, ``remove_with_message``; ``clean_attachments`` finishes one that was
cut short). The message's author or an owner may also remove the files and keep the
message (``purge``). Every removal is recorded in the log as ``signal.files.purged``, after
the bytes are gone; the rows stay, marked ``purged_at``, as the record of names and sizes.
"""

from __future__ import annotations

import logging
import re
from datetime import timedelta

from django.db import transaction
from django.http import Http404
from django.utils import timezone

from attachments import limits, sniff, storage
from attachments.models import Attachment
from houses.access import ThreadAccess, access_purge
from threads.entries import AttachmentRef, FilesPurged, ImageSize
from threads.lifecycle import new_entry
from threads.models import EntryLocation, Thread
from threads.recency import stream_writer

logger = logging.getLogger(__name__)
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f/\\]+")
# Uploads no message took are removed after this long (``manage.py clean_attachments``).
UNLINKED_FOR = timedelta(days=1)


class Conflict(Exception):
    """An upload named by a post is already carried by another message (409)."""


def clean_name(name: str) -> str:
    name = _UNSAFE_NAME.sub("_", name or "").strip(" .") or "file"
    return name[-255:]


def check_size(size: int) -> None:
    if size > limits.max_bytes():
        raise sniff.Refused(
            f"Files may be at most {limits.human_size(limits.max_bytes())}; "
            f"this one is {limits.human_size(size)}.",
            413,
        )


def upload(access: ThreadAccess, name: str, data: bytes) -> Attachment:
    """Check ``data`` against the limits (by content) and store it with its thumbnail."""
    return store_upload(access.thread, access.principal.agent_id, name, data)


def store_upload(thread, uploader_id: str, name: str, data: bytes) -> Attachment:
    """``upload`` for a known thread and uploader: also the worker's, for files a bot's
    run wrote (``dispatch.run_files``); the same limits, by content."""
    check_size(len(data))
    found = sniff.inspect(data, max_pixels=limits.max_pixels())
    if found.kept is not None:  # an image: upright and without its metadata (GPS, camera…)
        data = found.kept
    size = len(data)
    if found.content_type not in limits.allowed_types():
        raise sniff.Refused(
            f"Files of type {found.content_type} are not allowed here "
            f"(by their content, whatever the name says).",
            415,
        )
    row = Attachment(
        house_id=thread.house_id,
        thread=thread,
        uploader_id=uploader_id,
        name=clean_name(name),
        size=size,
        content_type=found.content_type,
        width=found.width,
        height=found.height,
    )
    prefix = f"{row.house_id}/{row.id}"
    row.key = storage.save(f"{prefix}/file", data)
    if found.thumbnail is not None:
        ext = "png" if sniff.thumb_type(found.thumbnail) == "image/png" else "jpg"
        row.thumb_key = storage.save(f"{prefix}/thumb.{ext}", found.thumbnail)
    row.save()
    return row


def ref_of(row: Attachment) -> AttachmentRef:
    image = ImageSize(w=row.width, h=row.height) if row.is_image else None
    return AttachmentRef(
        id=row.id, name=row.name, size=row.size, contentType=row.content_type, image=image
    )


def claim(access: ThreadAccess, ids: list[str], entry_id: str) -> list[AttachmentRef]:
    """Link the caller's uploads ``ids`` to the entry ``entry_id`` about to be appended.

    404 for ids that aren't the caller's uploads in this thread; 409 for one another
    message already carries. A retry of the same post (same ``entry_id``) claims again.
    """
    if not ids:
        return []
    if len(ids) > limits.max_per_message():
        raise sniff.Refused(f"A message may carry at most {limits.max_per_message()} files.")
    if len(set(ids)) != len(ids):
        raise sniff.Refused("attachments: the same file is named twice.")
    with transaction.atomic():
        rows = {
            r.id: r
            for r in Attachment.objects.select_for_update().filter(
                id__in=ids,
                thread=access.thread,
                uploader_id=access.principal.agent_id,
                purged_at__isnull=True,
            )
        }
        if len(rows) != len(ids):
            raise Http404("attachments: no such upload of yours in this thread.")
        if any(r.entry_id not in ("", entry_id) for r in rows.values()):
            raise Conflict("attachments: a file is already attached to another message.")
        Attachment.objects.filter(id__in=ids).update(entry_id=entry_id)
    return [ref_of(rows[i]) for i in ids]


def shown(access: ThreadAccess, attachment_id: str) -> Attachment:
    """The attachment a member may fetch, or 404: its message stands (no tombstone), its
    bytes are kept; an upload not yet sent only to its uploader."""
    row = Attachment.objects.filter(id=attachment_id, thread=access.thread).first()
    if row is None or row.purged_at is not None:
        raise Http404
    if not row.entry_id:
        if row.uploader_id != access.principal.agent_id:
            raise Http404
        return row
    standing = EntryLocation.objects.filter(
        thread=access.thread, entry_id=row.entry_id, deleted_by=""
    ).exists()
    if not standing:
        raise Http404
    return row


def purge(access: ThreadAccess, entry_id: str):
    """The message's author or an owner removes the bytes of every file ``entry_id``
    carries, and says so in the log."""
    location = EntryLocation.objects.filter(thread=access.thread, entry_id=entry_id).first()
    access_purge(access, location.author_id if location else None)
    removed = _remove(access.thread, entry_id, author=access.principal.agent_id)
    if removed is None:
        raise Http404
    return removed


def remove_with_message(access: ThreadAccess, entry_id: str) -> None:
    """After ``entry_id``'s tombstone is in the log: its files go too. A failure here leaves
    the files hidden (the tombstone does that) for ``clean_attachments`` to remove."""
    try:
        _remove(access.thread, entry_id, author=access.principal.agent_id)
    except Exception as exc:  # noqa: BLE001 - the delete stands; the sweep finishes it
        logger.warning(
            "attachments: files of deleted %s not removed yet: %s", entry_id, type(exc).__name__
        )


def _remove(thread, entry_id: str, *, author: str | None):
    """Delete the stored bytes of ``entry_id``'s files still kept, mark their rows, append
    ``signal.files.purged``; None when there was nothing to remove."""
    rows = list(Attachment.objects.filter(thread=thread, entry_id=entry_id, purged_at__isnull=True))
    if not rows:
        return None
    for row in rows:
        storage.delete(row.key)
        storage.delete(row.thumb_key)
    Attachment.objects.filter(id__in=[r.id for r in rows]).update(purged_at=timezone.now())
    entry = new_entry(
        FilesPurged(entryId=entry_id, attachmentIds=[r.id for r in rows]), author=author
    )
    return stream_writer().append(thread.stream_name, entry), entry


def clean_deleted() -> int:
    """Remove the files of deleted messages that are still kept (a delete whose after-step
    was cut short, a tombstone a bot wrote); how many messages' files went."""
    deleted = EntryLocation.objects.exclude(deleted_by="")
    pending = (
        Attachment.objects.filter(purged_at__isnull=True)
        .exclude(entry_id="")
        .filter(
            entry_id__in=deleted.values("entry_id"),
        )
        .values_list("thread_id", "entry_id")
        .distinct()
    )
    done = 0
    for thread_id, entry_id in list(pending):
        if not deleted.filter(thread_id=thread_id, entry_id=entry_id).exists():
            continue  # the same id deleted in another thread only
        thread = Thread.objects.filter(pk=thread_id).first()
        if thread is not None and _remove(thread, entry_id, author=None) is not None:
            done += 1
    return done


def clean_unlinked(older_than: timedelta = UNLINKED_FOR) -> int:
    """Remove uploads no message carries (or whose post never landed) after a while."""
    cutoff = timezone.now() - older_than
    gone = 0
    for row in Attachment.objects.filter(created_at__lt=cutoff, purged_at__isnull=True):
        if (
            row.entry_id
            and EntryLocation.objects.filter(
                thread_id=row.thread_id, entry_id=row.entry_id
            ).exists()
        ):
            continue
        storage.delete(row.key)
        storage.delete(row.thumb_key)
        row.delete()
        gone += 1
    return gone
