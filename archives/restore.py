"""Restore a house from its archive (``manage.py import_house``; docs/data.md).

1. The archive is checked whole first (``archives.checking``): nothing is written for an
   archive that is tampered with, truncated or holds an entry the contract refuses.
2. An ``ImportRecord`` keyed by the archive's id makes a second import of the same archive
   a no-op and an interrupted one resume where it stopped (``abandon`` rolls it back).
3. The house, its people (``archives.people``) and bots are made; every id the archive uses
   (agents, threads, files) is kept when nothing here has it, else given a new one, and
   the choice is stored in the record before anything uses it.
4. Each thread's log is appended as the archive has it (``archives.appending``; entries
   are rewritten only where an id had to change: exact string values, nothing else), then
   its row is stored with who reads it, folded from those entries: a private thread is
   never open, not even during the import.
5. Files go into the attachments storage; the house's own log into its new stream.
6. Every cache is rebuilt from the logs (``archives.rebuild.REBUILDS``), then read
   positions are set, and the record says done.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

import msgspec
from django.db import transaction
from django.utils import timezone

from archives import format as fmt
from archives.appending import append_log
from archives.checking import Checked, check_archive, read_manifest
from archives.models import ImportRecord, Placeholder
from archives.people import link_person, make_bot
from archives.rebuild import rebuild_threads
from archives.zipsafe import ArchiveError, SafeZip
from attachments import storage
from attachments.models import Attachment, new_attachment_id
from houses.house_log import house_stream_name
from houses.models import Agent, House
from houses.names import one_line
from streams.errors import StreamNotFound
from threads.entries import decode_entry
from threads.log import log_reader
from threads.models import Thread, ThreadRead, new_thread_id, stream_name_for
from threads.readers import fold_readers, store

Progress = Callable[[str, int, int], None]


@dataclass
class Restored:
    house: House
    already: bool = False  # this archive was imported before: nothing was done
    threads: int = 0
    entries: int = 0


def restore_archive(path, *, slug: str | None = None, progress: Progress | None = None) -> Restored:
    tick = progress or (lambda stage, done, total: None)
    with SafeZip(path) as archive:
        tick("checking", 0, 1)
        checked = check_archive(archive)
        tick("checking", 1, 1)
        record, _ = ImportRecord.objects.get_or_create(archive_id=checked.manifest.archiveId)
        if record.state == ImportRecord.State.DONE and record.house is not None:
            return Restored(record.house, already=True)
        return _Restore(archive, checked, record, tick).run(slug)


def abandon_archive(path) -> House | None:
    """Roll back an import that did not finish: its house, rows, files and placeholders go.
    Streams it created stay (the writer never deletes a log); a later import picks new
    names for them. Returns the house removed, or None when there was nothing to undo."""
    with SafeZip(path) as archive:
        manifest = read_manifest(archive)
    record = ImportRecord.objects.filter(archive_id=manifest.archiveId).first()
    if record is None or record.state == ImportRecord.State.DONE:
        return None
    return abandon(record)


def abandon(record: ImportRecord) -> House | None:
    house = record.house
    with transaction.atomic():
        if house is not None:
            for row in Attachment.objects.filter(house=house):
                storage.delete(row.key)
                storage.delete(row.thumb_key)
            house.delete()
        made = record.id_map.get("placeholders", [])
        Placeholder.objects.filter(user_id__in=made).select_related("user").delete()
        from django.contrib.auth import get_user_model

        get_user_model().objects.filter(pk__in=made, placeholder__isnull=True).delete()
        record.delete()
    return house


def _parse_time(text: str) -> datetime.datetime | None:
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        return None


def _thumb_ext(data: bytes) -> str:
    return ".png" if data.startswith(b"\x89PNG") else ".jpg"


def _stream_free(name: str) -> bool:
    try:
        log_reader().head(name)
    except StreamNotFound:
        return True
    return False


def translate(line: bytes, mapping: dict[str, str]) -> bytes:
    """``line`` with every JSON string that is exactly an id in ``mapping`` replaced."""
    if not mapping or not any(old.encode() in line for old in mapping):
        return line  # the usual line: it names none of the ids that changed

    def walk(value):
        if isinstance(value, str):
            return mapping.get(value, value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return msgspec.json.encode(walk(msgspec.json.decode(line)))


class _Restore:
    def __init__(self, archive: SafeZip, checked: Checked, record: ImportRecord, tick: Progress):
        self.archive, self.c, self.record, self.tick = archive, checked, record, tick
        self.ids: dict = record.id_map or {}
        for kind in ("agents", "threads", "attachments"):
            self.ids.setdefault(kind, {})
        self.ids.setdefault("placeholders", [])

    def save(self, **fields) -> None:
        self.record.id_map = self.ids
        for name, value in fields.items():
            setattr(self.record, name, value)
        self.record.save()

    @property
    def mapping(self) -> dict[str, str]:
        out = {}
        for kind in ("agents", "threads", "attachments"):
            out.update({old: new for old, new in self.ids[kind].items() if old != new})
        return out

    def run(self, slug: str | None) -> Restored:
        house = self.record.house or self._house(slug)
        self._people(house)
        self._choose_ids()
        self.save()
        done = set(self.record.threads_done)
        total = len(self.c.threads)
        for n, doc in enumerate(self.c.threads, 1):
            if doc.id not in done:
                self._thread(house, doc)
                self.record.threads_done.append(doc.id)
                self.save()
            self.tick("threads", n, total)
        self._parents_and_times(house)
        self._files(house)
        lines = (translate(line, self.mapping) for _, line in self.archive.lines(fmt.HOUSE_LOG))
        append_log(house_stream_name(house.id), lines, f"import:{self.c.manifest.archiveId}:house")
        threads = list(Thread.objects.filter(house=house).order_by("pk"))
        rebuild_threads(threads, lambda done, total: self.tick("rebuilding", done, total))
        self._reads()
        self.save(state=ImportRecord.State.DONE, finished_at=timezone.now())
        return Restored(house, threads=total, entries=self.c.entries)

    def _house(self, slug: str | None) -> House:
        slug = slug or self.c.house.slug
        if House.objects.filter(slug=slug).exists():
            raise ArchiveError(
                f"a house {slug!r} exists here already; import under another slug (--slug)"
            )
        house = House.objects.create(slug=slug, name=self.c.house.name)
        when = _parse_time(self.c.house.createdAt)
        if when:
            House.objects.filter(pk=house.pk).update(created_at=when)
        self.save(house=house)
        return house

    def _people(self, house: House) -> None:
        agents = self.ids["agents"]
        for p in self.c.people:
            agent, made_now = link_person(
                house,
                agent_id=agents.get(p.agentId, p.agentId),
                username=p.username,
                handle=p.handle,
                display_name=p.displayName,
                email=p.email,
                role=None if p.role == "former" else p.role,
            )
            if made_now:  # an abandoned import removes only the placeholders it made
                self.ids["placeholders"].append(agent.user_id)
            agents[p.agentId] = agent.id
            self.save()
        for b in self.c.bots:
            bot = make_bot(
                house,
                agent_id=agents.get(b.agentId, b.agentId),
                handle=b.handle,
                display_name=b.displayName,
                provider=b.provider,
                model=b.model,
                instructions=b.instructions,
                api_key_env=b.apiKeyEnv,
                involvement=b.involvement,
                active=b.active,
            )
            agents[b.agentId] = bot.id
            self.save()

    def _choose_ids(self) -> None:
        threads = self.ids["threads"]
        for doc in self.c.threads:
            if doc.id in threads:
                continue
            free = not Thread.objects.filter(pk=doc.id).exists() and _stream_free(
                stream_name_for(doc.id)
            )
            threads[doc.id] = doc.id if free else new_thread_id()
        # Files too, before any entry that names one is appended.
        files = self.ids["attachments"]
        for doc in self.c.attachments:
            if doc.id not in files:
                taken = Attachment.objects.filter(pk=doc.id).exists()
                files[doc.id] = new_attachment_id() if taken else doc.id

    def _thread(self, house: House, doc: fmt.ThreadDoc) -> None:
        local = self.ids["threads"][doc.id]
        mapping = self.mapping
        lines = [
            translate(line, mapping) for _, line in self.archive.lines(fmt.thread_member(doc.id))
        ]
        producer = f"import:{self.c.manifest.archiveId}:{doc.id}"
        append_log(stream_name_for(local), lines, producer)
        readers = fold_readers(decode_entry(line) for line in lines)
        creator = self.ids["agents"].get(doc.createdBy or "")
        with transaction.atomic():
            thread, made = Thread.objects.get_or_create(
                id=local,
                defaults={
                    "house": house,
                    # One line, as a title typed here is (an archive from before, or edited).
                    "title": one_line(doc.title) or "Untitled",
                    "created_by": Agent.objects.filter(pk=creator).first() if creator else None,
                    "visibility": readers.visibility,
                    "direct_key": readers.key,
                },
            )
            store(thread.id, readers)

    def _parents_and_times(self, house: House) -> None:
        threads = self.ids["threads"]
        for doc in self.c.threads:
            fields = {}
            if doc.parentId:
                fields["parent_id"] = threads[doc.parentId]
            if when := _parse_time(doc.createdAt):
                fields["created_at"] = when
            fields["archived_at"] = _parse_time(doc.archivedAt)
            Thread.objects.filter(pk=threads[doc.id], house=house).update(**fields)

    def _files(self, house: House) -> None:
        chosen = self.ids["attachments"]
        total = len(self.c.attachments)
        for n, doc in enumerate(self.c.attachments, 1):
            local = chosen[doc.id]
            if not Attachment.objects.filter(pk=local).exists():
                self._file(house, doc, local)
            self.tick("files", n, total)

    def _file(self, house: House, doc: fmt.AttachmentDoc, local: str) -> None:
        from attachments.limits import max_bytes

        agents, threads = self.ids["agents"], self.ids["threads"]
        row = Attachment(
            id=local,
            house=house,
            thread_id=threads[doc.threadId],
            uploader_id=agents.get(doc.uploaderId, doc.uploaderId),
            name=doc.name,
            size=doc.size,
            content_type=doc.contentType,
            width=doc.width,
            height=doc.height,
            entry_id=doc.entryId,
        )
        if not Agent.objects.filter(pk=row.uploader_id).exists():
            return  # a file whose uploader the archive doesn't describe: kept in the log only
        if doc.purged:
            row.purged_at = timezone.now()
        else:
            limit = max_bytes() * 2
            row.key = storage.save(
                f"{house.id}/{local}/file", self.archive.read(fmt.file_member(doc.id), limit)
            )
            if doc.thumb:
                data = self.archive.read(fmt.file_member(doc.id, thumb=True), limit)
                row.thumb_key = storage.save(f"{house.id}/{local}/thumb{_thumb_ext(data)}", data)
        row.save()
        if when := _parse_time(doc.createdAt):
            Attachment.objects.filter(pk=local).update(created_at=when)

    def _reads(self) -> None:
        agents, threads = self.ids["agents"], self.ids["threads"]
        users = dict(
            Agent.objects.filter(pk__in=set(agents.values()), kind=Agent.Kind.PERSON).values_list(
                "pk", "user_id"
            )
        )
        for r in self.c.reads:
            user_id = users.get(agents.get(r.agentId, ""))
            if user_id is None:
                continue
            ThreadRead.objects.update_or_create(
                user_id=user_id, thread_id=threads[r.threadId], defaults={"read_seq": r.readSeq}
            )
