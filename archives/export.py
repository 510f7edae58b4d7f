"""Export a house: its rows and every log, as stored, into one self-describing zip.

Archives are logs (DESIGN §14): each thread's entries go out exactly as the stream holds
them, in order, tombstones and edits included, with their ids and times; the house's own
log likewise. Beside them go the rows that describe people (names, handles, confirmed
emails; never password hashes, sessions or tokens), bots (their settings; a key is never
stored, only the name of the variable that holds it), threads, read positions and files.
Everything derived (status, recency, unread counts, windows, search, inbox, who reads a
private thread) is left out: the import rebuilds it from the logs.

``drop_deleted_text`` is for an export meant to leave the organisation: a chat entry with a
tombstone in its log keeps its id, time and author but says ``(deleted)`` and carries no
files, and edits of it say the same.
"""

from __future__ import annotations

import hashlib
import uuid
import zipfile
from collections.abc import Callable

import msgspec
from django.utils import timezone

from archives import format as fmt
from attachments import storage
from attachments.models import Attachment
from houses.house_log import house_stream_name
from houses.models import Agent, House, Membership
from streams.errors import StreamNotFound
from threads.log import log_reader
from threads.models import Thread, ThreadRead

Progress = Callable[[int, int], None]
DELETED_TEXT = "(deleted)"


def _iso(value) -> str:
    return value.isoformat() if value else ""


def raw_log(stream_name: str) -> list[bytes]:
    """The stream's messages as stored. A JSON message holds no raw newline except as
    whitespace between tokens, so one message is one line once those become spaces."""
    try:
        result = log_reader().catch_up(stream_name)
    except StreamNotFound:
        return []
    return [m.replace(b"\r", b" ").replace(b"\n", b" ") for m in (result.messages or ())]


def drop_deleted(lines: list[bytes]) -> list[bytes]:
    """The log with the text of tombstoned chat (and of its edits) replaced."""
    docs = []
    for line in lines:
        try:
            docs.append(msgspec.json.decode(line))
        except msgspec.DecodeError:
            docs.append(None)
    deleted = {
        d["payload"].get("entryId")
        for d in docs
        if isinstance(d, dict)
        and isinstance(d.get("payload"), dict)
        and d["payload"].get("type") == "signal.entry.deleted"
    }
    out = []
    for line, doc in zip(lines, docs, strict=True):
        payload = doc.get("payload") if isinstance(doc, dict) else None
        if isinstance(payload, dict) and payload.get("type") == "chat" and doc.get("id") in deleted:
            payload["text"] = DELETED_TEXT
            payload.pop("attachments", None)
            line = msgspec.json.encode(doc)
        elif (
            isinstance(payload, dict)
            and payload.get("type") == "signal.entry.edited"
            and payload.get("entryId") in deleted
        ):
            payload["text"] = DELETED_TEXT
            line = msgspec.json.encode(doc)
        out.append(line)
    return out


class _Writer:
    """A zip being written, with each member's checksum for the manifest."""

    def __init__(self, path):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6)
        self.files: dict[str, fmt.FileSum] = {}

    def add(self, name: str, data: bytes) -> None:
        self.zip.writestr(name, data)
        self.files[name] = fmt.FileSum(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))

    def close(self) -> None:
        self.zip.close()


def export_house(
    house: House, path, *, drop_deleted_text: bool = False, progress: Progress | None = None
) -> fmt.Manifest:
    """Write ``house`` to the zip at ``path``; returns its manifest."""
    threads = list(Thread.objects.filter(house=house).order_by("created_at", "pk"))
    files = list(Attachment.objects.filter(house=house).order_by("created_at", "pk"))
    total, done = len(threads) + len(files) + 1, 0
    tick = progress or (lambda done, total: None)
    out = _Writer(path)
    try:
        counts = fmt.Counts()
        out.add(fmt.HOUSE, fmt.encode(fmt.HouseDoc(house.slug, house.name, _iso(house.created_at))))
        people = _people(house)
        bots = [_bot(b) for b in house.bots.order_by("created_at", "pk")]
        out.add(fmt.BOTS, fmt.encode(bots))

        docs, authors = [], set()
        for thread in threads:
            lines = raw_log(thread.stream_name)
            authors |= authors_of(lines)
            if drop_deleted_text:
                lines = drop_deleted(lines)
            out.add(fmt.thread_member(thread.id), b"".join(line + b"\n" for line in lines))
            docs.append(_thread(thread, len(lines)))
            counts.entries += len(lines)
            done += 1
            tick(done, total)
        out.add(fmt.THREADS, fmt.encode(docs))
        counts.threads = len(docs)

        house_lines = raw_log(house_stream_name(house.id))
        authors |= authors_of(house_lines)
        authors |= {row.uploader_id for row in files}
        former = _former(authors - {p.agentId for p in people} - {b.agentId for b in bots})
        people += former  # people who left: their entries stay, so do their names
        out.add(fmt.PEOPLE, fmt.encode(people))
        counts.people, counts.bots = len(people), len(bots)
        out.add(fmt.HOUSE_LOG, b"".join(line + b"\n" for line in house_lines))
        counts.houseEntries = len(house_lines)

        reads = _reads(threads)
        out.add(fmt.READS, fmt.encode(reads))
        counts.reads = len(reads)

        kept = []
        for row in files:
            kept.append(_attachment(row, out))
            done += 1
            tick(done, total)
        out.add(fmt.ATTACHMENTS, fmt.encode(kept))
        counts.attachments = len(kept)

        manifest = fmt.Manifest(
            format=fmt.FORMAT,
            version=fmt.VERSION,
            archiveId=uuid.uuid4().hex,
            createdAt=timezone.now().isoformat(),
            house=house.slug,
            counts=counts,
            files=dict(out.files),
            deletedTextDropped=drop_deleted_text,
        )
        out.zip.writestr(fmt.MANIFEST, fmt.encode(manifest))
    finally:
        out.close()
    tick(total, total)
    return manifest


def _people(house: House) -> list[fmt.PersonDoc]:
    rows = (
        Membership.objects.filter(house=house)
        .select_related("user", "user__agent")
        .order_by("created_at", "pk")
    )
    people = []
    for m in rows:
        agent = getattr(m.user, "agent", None)
        if agent is None:
            continue  # a person who never had a principal wrote nothing
        people.append(
            fmt.PersonDoc(
                agentId=agent.id,
                username=m.user.get_username(),
                handle=agent.handle,
                displayName=agent.display_name,
                role=m.role,
                email=m.user.email or "",
                joinedAt=_iso(m.created_at),
            )
        )
    return people


class _Author(msgspec.Struct, gc=False):
    authorId: str | None = None


_author = msgspec.json.Decoder(_Author)


def authors_of(lines: list[bytes]) -> set[str]:
    out = set()
    for line in lines:
        try:
            found = _author.decode(line).authorId
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        if found:
            out.add(found)
    return out


def _former(agent_ids: set[str]) -> list[fmt.PersonDoc]:
    rows = Agent.objects.filter(pk__in=agent_ids, kind=Agent.Kind.PERSON).select_related("user")
    return [
        fmt.PersonDoc(
            agentId=a.id,
            username=a.user.get_username(),
            handle=a.handle,
            displayName=a.display_name,
            role="former",
            email=a.user.email or "",
        )
        for a in rows.order_by("pk")
    ]


def _bot(bot) -> fmt.BotDoc:
    return fmt.BotDoc(
        agentId=bot.id,
        handle=bot.handle,
        displayName=bot.display_name,
        provider=bot.provider,
        model=bot.model,
        instructions=bot.instructions,
        apiKeyEnv=bot.api_key_env,
        involvement=bot.involvement,
        active=bot.active,
    )


def _thread(thread: Thread, entries: int) -> fmt.ThreadDoc:
    return fmt.ThreadDoc(
        id=thread.id,
        title=thread.title,
        entries=entries,
        parentId=thread.parent_id,
        createdBy=thread.created_by_id,
        createdAt=_iso(thread.created_at),
        archivedAt=_iso(thread.archived_at),
    )


def _reads(threads: list[Thread]) -> list[fmt.ReadDoc]:
    rows = (
        ThreadRead.objects.filter(thread__in=threads, read_seq__gt=0, user__agent__isnull=False)
        .values_list("thread_id", "user__agent__id", "read_seq")
        .order_by("thread_id", "user_id")
    )
    return [fmt.ReadDoc(threadId=t, agentId=a, readSeq=s) for t, a, s in rows]


def _attachment(row: Attachment, out: _Writer) -> fmt.AttachmentDoc:
    purged = row.purged_at is not None or not row.key
    thumb = False
    if not purged:
        try:
            with storage.open_file(row.key) as f:
                out.add(fmt.file_member(row.id), f.read())
        except FileNotFoundError:
            purged = True  # the bytes are gone already (a cut-short deletion): none to carry
    if not purged and row.thumb_key:
        try:
            with storage.open_file(row.thumb_key) as f:
                out.add(fmt.file_member(row.id, thumb=True), f.read())
            thumb = True
        except FileNotFoundError:
            pass
    return fmt.AttachmentDoc(
        id=row.id,
        threadId=row.thread_id,
        uploaderId=row.uploader_id,
        name=row.name,
        size=row.size,
        contentType=row.content_type,
        width=row.width,
        height=row.height,
        entryId=row.entry_id,
        createdAt=_iso(row.created_at),
        purged=purged,
        thumb=thumb,
    )
