"""The house archive's format, version 1 (docs/data.md): a zip of JSON documents, one
JSON-lines log per thread and the house's own log, the files, and a manifest that lists
every other member with its SHA-256.

Every document is a msgspec struct: an archive is untrusted input when it is imported, so
it is decoded strictly (unknown fields refused) and each field is bounded.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta, Struct

FORMAT = "arbe-house-archive"
VERSION = 1

MANIFEST = "manifest.json"
HOUSE = "house.json"
PEOPLE = "people.json"
BOTS = "bots.json"
THREADS = "threads.json"
READS = "reads.json"
ATTACHMENTS = "attachments.json"
HOUSE_LOG = "house-log.jsonl"
THREAD_LOGS = "threads/"  # threads/<thread id>.jsonl
FILES = "files/"  # files/<attachment id>, files/<attachment id>.thumb

Id = Annotated[str, Meta(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]
Short = Annotated[str, Meta(max_length=255)]
Member = Annotated[str, Meta(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_./-]+$")]
Sha = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}$")]
Count = Annotated[int, Meta(ge=0)]


class Doc(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    pass


class FileSum(Doc):
    sha256: Sha
    bytes: Count


class Counts(Doc):
    people: Count = 0
    bots: Count = 0
    threads: Count = 0
    entries: Count = 0
    houseEntries: Count = 0
    attachments: Count = 0
    reads: Count = 0


class Manifest(Doc):
    format: str
    version: int
    archiveId: Id
    createdAt: Short
    house: Short  # the house's slug where it was exported
    counts: Counts
    files: dict[Member, FileSum]
    deletedTextDropped: bool = False
    source: Short = "arbe"


class HouseDoc(Doc):
    slug: Annotated[str, Meta(min_length=1, max_length=64, pattern=r"^[-a-zA-Z0-9_]+$")]
    name: Annotated[str, Meta(min_length=1, max_length=200)]
    createdAt: Short = ""


class PersonDoc(Doc):
    agentId: Id
    username: Annotated[str, Meta(min_length=1, max_length=150)]
    handle: Annotated[str, Meta(min_length=1, max_length=32)]
    displayName: Annotated[str, Meta(min_length=1, max_length=100)]
    # "former": no longer in the house, but their entries are (they keep their names).
    role: Annotated[str, Meta(pattern=r"^(owner|member|former)$")]
    email: Annotated[str, Meta(max_length=254)] = ""
    joinedAt: Short = ""


class BotDoc(Doc):
    agentId: Id
    handle: Annotated[str, Meta(min_length=1, max_length=32)]
    displayName: Annotated[str, Meta(min_length=1, max_length=100)]
    provider: Annotated[str, Meta(max_length=64)] = ""
    model: Annotated[str, Meta(max_length=128)] = ""
    instructions: Annotated[str, Meta(max_length=100_000)] = ""
    # The name of the variable that holds the key where the bot runs, never the key.
    apiKeyEnv: Annotated[str, Meta(max_length=64)] = ""
    involvement: Annotated[str, Meta(pattern=r"^(mentions|everything)$")] = "mentions"
    active: bool = True


class ThreadDoc(Doc):
    id: Id
    title: Annotated[str, Meta(min_length=1, max_length=200)]
    entries: Count  # lines in threads/<id>.jsonl
    parentId: Id | None = None
    createdBy: Id | None = None
    createdAt: Short = ""
    archivedAt: Short = ""


class ReadDoc(Doc):
    """How far a person had read a thread: a chat position (``ThreadRead.read_seq``),
    which the log's own order defines, so it means the same on any server."""

    threadId: Id
    agentId: Id
    readSeq: Count


class AttachmentDoc(Doc):
    id: Id
    threadId: Id
    uploaderId: Id
    name: Annotated[str, Meta(min_length=1, max_length=255)]
    size: Count
    contentType: Annotated[str, Meta(min_length=1, max_length=100)]
    width: Count | None = None
    height: Count | None = None
    entryId: Annotated[str, Meta(max_length=128)] = ""
    createdAt: Short = ""
    purged: bool = False  # bytes removed with their message: no file in the archive
    thumb: bool = False  # files/<id>.thumb is there


def file_member(attachment_id: str, thumb: bool = False) -> str:
    return f"{FILES}{attachment_id}{'.thumb' if thumb else ''}"


def thread_member(thread_id: str) -> str:
    return f"{THREAD_LOGS}{thread_id}.jsonl"


_encoder = msgspec.json.Encoder()


def encode(doc) -> bytes:
    return _encoder.encode(doc)
