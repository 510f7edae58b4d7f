"""Checking a house archive whole before anything is written (docs/data.md).

The manifest must name this format and a version this server reads; every other member
must be listed in it with the SHA-256 and size it has (a tampered or truncated archive is
refused, naming the member); the documents must decode to their structs; every log line
must be one entry the entry contract accepts (``threads.entries.decode_entry``), named by
member and line when it isn't; and the references between documents must hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from archives import format as fmt
from archives.zipsafe import ArchiveError, SafeZip
from threads.entries import EntryError, decode_entry


@dataclass
class Checked:
    manifest: fmt.Manifest
    house: fmt.HouseDoc
    people: list[fmt.PersonDoc]
    bots: list[fmt.BotDoc]
    threads: list[fmt.ThreadDoc]
    reads: list[fmt.ReadDoc]
    attachments: list[fmt.AttachmentDoc]
    house_entries: int = 0
    entries: int = field(default=0)


def _doc(archive: SafeZip, name: str, type_):
    try:
        return msgspec.json.decode(archive.read(name), type=type_)
    except msgspec.ValidationError as exc:
        raise ArchiveError(f"{name}: {exc}") from None
    except msgspec.DecodeError as exc:
        raise ArchiveError(f"{name}: not JSON ({exc})") from None


def read_manifest(archive: SafeZip) -> fmt.Manifest:
    manifest = _doc(archive, fmt.MANIFEST, fmt.Manifest)
    if manifest.format != fmt.FORMAT:
        raise ArchiveError(f"{fmt.MANIFEST}: not an arbe house archive ({manifest.format!r})")
    if manifest.version != fmt.VERSION:
        raise ArchiveError(
            f"{fmt.MANIFEST}: format version {manifest.version}; this server reads {fmt.VERSION}"
        )
    return manifest


def verify_checksums(archive: SafeZip, manifest: fmt.Manifest) -> None:
    listed = set(manifest.files)
    for name in archive.names():
        if name != fmt.MANIFEST and name not in listed:
            raise ArchiveError(f"{name}: not listed in the manifest (the archive was changed)")
    for name, expected in manifest.files.items():
        digest, size = archive.sha256(name)
        if digest != expected.sha256 or size != expected.bytes:
            raise ArchiveError(
                f"{name}: its checksum does not match the manifest; the archive was changed "
                "or damaged and is refused"
            )


def check_log(archive: SafeZip, name: str) -> int:
    count = 0
    for number, line in archive.lines(name):
        try:
            decode_entry(line)
        except EntryError as exc:
            raise ArchiveError(f"{name}, line {number}: {exc}") from None
        count += 1
    return count


def check_archive(archive: SafeZip) -> Checked:
    manifest = read_manifest(archive)
    verify_checksums(archive, manifest)
    checked = Checked(
        manifest=manifest,
        house=_doc(archive, fmt.HOUSE, fmt.HouseDoc),
        people=_doc(archive, fmt.PEOPLE, list[fmt.PersonDoc]),
        bots=_doc(archive, fmt.BOTS, list[fmt.BotDoc]),
        threads=_doc(archive, fmt.THREADS, list[fmt.ThreadDoc]),
        reads=_doc(archive, fmt.READS, list[fmt.ReadDoc]),
        attachments=_doc(archive, fmt.ATTACHMENTS, list[fmt.AttachmentDoc]),
    )
    _check_references(checked)
    for thread in checked.threads:
        member = fmt.thread_member(thread.id)
        found = check_log(archive, member)
        if found != thread.entries:
            raise ArchiveError(
                f"{member}: {found} entries where {fmt.THREADS} says {thread.entries}"
            )
        checked.entries += found
    checked.house_entries = check_log(archive, fmt.HOUSE_LOG)
    for doc in checked.attachments:
        for thumb in (False, True) if doc.thumb else (False,):
            if not doc.purged and fmt.file_member(doc.id, thumb) not in manifest.files:
                raise ArchiveError(f"{fmt.file_member(doc.id, thumb)}: missing from the archive")
    return checked


def _unique(ids: list[str], what: str) -> set[str]:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise ArchiveError(f"{what}: {i!r} appears twice")
        seen.add(i)
    return seen


def _check_references(c: Checked) -> None:
    agents = _unique([p.agentId for p in c.people] + [b.agentId for b in c.bots], fmt.PEOPLE)
    threads = _unique([t.id for t in c.threads], fmt.THREADS)
    _unique([a.id for a in c.attachments], fmt.ATTACHMENTS)
    for t in c.threads:
        if t.parentId is not None and t.parentId not in threads:
            raise ArchiveError(f"{fmt.THREADS}: thread {t.id} names a parent that isn't there")
    for r in c.reads:
        if r.threadId not in threads or r.agentId not in agents:
            raise ArchiveError(f"{fmt.READS}: a read position of an unknown thread or person")
    for a in c.attachments:
        if a.threadId not in threads:
            raise ArchiveError(f"{fmt.ATTACHMENTS}: file {a.id} of an unknown thread")
