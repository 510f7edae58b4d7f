"""Move a Slack workspace export into a house (``manage.py import_slack``; docs/data.md).

The export is read and checked whole first (``archives.slack.plan``); then the house, its
people (linked by email, else placeholders who claim their history when they confirm that
email here: ``archives.claiming``) and the Slack bots (retired bots of the house: they
wrote, they never answer) are made; then each conversation becomes a thread whose log is
ordinary entries: ``signal.thread.created`` (and ``made_private`` for a private channel or
a direct conversation), one ``chat`` per message with Slack's time as ``sentAt``, an
``signal.entry.edited`` for an edited one, ``signal.entry.reaction`` per person and
reaction, a tombstone for a message Slack shows as deleted, and at the end a director
outcome that settles the history (no bot owes a reply to an imported message).

Entry ids are Slack's own (``slack:<channel>:<ts>``), and the import is recorded by the
export file's SHA-256, so running it again resumes or does nothing. The logs are appended
without the seam and every cache is rebuilt from them (``archives.rebuild``), as a
restore does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from archives.appending import append_log
from archives.models import ImportRecord
from archives.people import link_person, make_bot
from archives.rebuild import rebuild_threads
from archives.slack import files as slack_files
from archives.slack.mrkdwn import to_markdown
from archives.slack.plan import Conversation, Person, Plan, Planned, read_plan, split_replies
from archives.zipsafe import SafeZip
from attachments.service import ref_of
from houses.models import Agent, House
from threads.contract import MAX_CHAT_CHARS
from threads.entries import (
    Chat,
    DirectorOutcome,
    Entry,
    EntryDeleted,
    EntryEdited,
    EntryReaction,
    ThreadArchived,
    ThreadCreated,
    ThreadMadePrivate,
    encode_entry,
)
from threads.lifecycle import JSON, now_ms
from threads.models import Thread, Visibility, new_thread_id, stream_name_for
from threads.readers import Readers, store
from threads.recency import stream_writer

Progress = Callable[[str, int, int], None]
SETTLED = "Imported from Slack: history, not questions for the bots."


@dataclass
class SlackImported:
    house: House
    already: bool = False
    threads: int = 0
    messages: int = 0
    skipped: int = 0
    files_linked: int = 0
    files_stored: int = 0


def file_digest(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def import_slack(
    path,
    *,
    house_name: str,
    token: str = "",
    replies_as_threads: bool = False,
    progress: Progress | None = None,
) -> SlackImported:
    tick = progress or (lambda stage, done, total: None)
    archive_id = f"slack:{file_digest(path)}" + (":replies" if replies_as_threads else "")
    with SafeZip(path) as archive:
        tick("reading", 0, 1)
        plan = read_plan(archive)
        tick("reading", 1, 1)
    if replies_as_threads:
        plan.conversations = [part for c in plan.conversations for part in split_replies(c)]
    record, _ = ImportRecord.objects.get_or_create(
        archive_id=archive_id, defaults={"kind": "slack"}
    )
    if record.state == ImportRecord.State.DONE and record.house is not None:
        return SlackImported(record.house, already=True)
    return _Import(plan, record, tick, token).run(house_name)


class _Import:
    def __init__(self, plan: Plan, record: ImportRecord, tick: Progress, token: str):
        self.plan, self.record, self.tick, self.token = plan, record, tick, token
        self.ids = record.id_map or {}
        for kind in ("agents", "threads"):
            self.ids.setdefault(kind, {})
        self.ids.setdefault("placeholders", [])
        self.result: SlackImported | None = None

    def save(self, **fields) -> None:
        self.record.id_map = self.ids
        for name, value in fields.items():
            setattr(self.record, name, value)
        self.record.save()

    def run(self, house_name: str) -> SlackImported:
        house = self.record.house or self._house(house_name)
        self.result = SlackImported(house, skipped=self.plan.skipped)
        self._people(house)
        agents = Agent.objects.in_bulk(list(self.ids["agents"].values()))
        self.handles = {s: agents[a].handle for s, a in self.ids["agents"].items() if a in agents}
        done = set(self.record.threads_done)
        total = len(self.plan.conversations)
        client = slack_files.new_client() if self.token else None
        try:
            for n, c in enumerate(self.plan.conversations, 1):
                if c.id not in done:
                    self._conversation(house, c, client)
                    self.record.threads_done.append(c.id)
                    self.save()
                self.tick("conversations", n, total)
        finally:
            if client is not None:
                client.close()
        threads = list(Thread.objects.filter(pk__in=self.ids["threads"].values()).order_by("pk"))
        rebuild_threads(threads, lambda d, t: self.tick("rebuilding", d, t))
        self.save(state=ImportRecord.State.DONE, finished_at=timezone.now())
        self.result.threads, self.result.messages = len(threads), self.plan.messages
        return self.result

    def _house(self, name: str) -> House:
        slug = slugify(name)[:64] or "slack"
        house = House.objects.filter(slug=slug).first()
        if house is None:
            house = House.objects.create(slug=slug, name=name[:200])
        self.save(house=house)
        return house

    def _people(self, house: House) -> None:
        agents = self.ids["agents"]
        authors = {m.author for c in self.plan.conversations for m in c.messages}
        members = {u for c in self.plan.conversations for u in c.members}
        people = dict(self.plan.people)
        for slack_id in sorted((authors | members) - set(people)):
            if not slack_id.startswith("bot:"):  # someone users.json doesn't describe
                people[slack_id] = Person(slack_id, slack_id.lower(), slack_id)
        for slack_id, person in people.items():
            if person.bot:
                if slack_id in authors:  # a bot user that wrote as itself
                    authors.add(f"bot:{person.username}")
                continue
            if slack_id not in authors | members:
                continue  # never wrote nor was in a conversation: not brought in
            agent, made = link_person(
                house,
                agent_id=agents.get(slack_id, ""),
                username=person.username,
                handle=person.username,
                display_name=person.display,
                email=person.email,
                source="slack",
            )
            if made:
                self.ids["placeholders"].append(agent.user_id)
            agents[slack_id] = agent.id
            self.save()
        for author in sorted(a for a in authors if a.startswith("bot:")):
            name = author[4:] or "slack-bot"
            bot = make_bot(
                house, agent_id=agents.get(author, ""), handle=name, display_name=name, active=False
            )
            agents[author] = bot.id
            self.save()
        for slack_id, person in people.items():
            if person.bot and f"bot:{person.username}" in agents:  # wrote by its user id
                agents[slack_id] = agents[f"bot:{person.username}"]
        self.save()

    def _agent(self, slack_id: str) -> str | None:
        return self.ids["agents"].get(slack_id) or None

    def _conversation(self, house: House, c: Conversation, client) -> None:
        thread_id = self.ids["threads"].setdefault(c.id, new_thread_id())
        self.save()
        name = stream_name_for(thread_id)
        stream_writer().create(name, content_type=JSON)
        members = frozenset(a for a in (self._agent(m) for m in c.members) if a)
        readers = None
        if c.kind != "open" and members:
            # A Slack thread of a DM reads as its DM, but the DM is the set's one direct
            # conversation: the thread of replies is private to the same people.
            direct = c.kind == "direct" and not c.parent
            readers = Readers(Visibility.DIRECT if direct else Visibility.PRIVATE, members)
        creator = self._agent(c.creator)
        parent = self.ids["threads"].get(c.parent) if c.parent else None
        with transaction.atomic():
            thread, _ = Thread.objects.get_or_create(
                id=thread_id,
                defaults={
                    "house": house,
                    "title": c.title or c.id,
                    "created_by_id": creator,
                    "parent_id": parent,
                    "visibility": readers.visibility if readers else Visibility.HOUSE,
                    "direct_key": readers.key if readers else "",
                    "archived_at": timezone.now() if c.archived else None,
                },
            )
            if readers is not None:
                store(thread.id, readers)
        entries = self._entries(thread, c, readers, creator, client, parent)
        append_log(name, (encode_entry(e) for e in entries), f"{self.record.archive_id}:{c.id}")

    def _entries(self, thread, c: Conversation, readers, creator, client, parent) -> list[Entry]:
        ts = now_ms()
        key = f"slack:{c.id}"
        created = ThreadCreated(title=thread.title, parentThreadId=parent)
        out = [Entry(id=f"{key}:created", ts=ts, payload=created, authorId=creator)]
        if readers is not None:
            made = ThreadMadePrivate(
                memberIds=sorted(readers.members), direct=readers.visibility == Visibility.DIRECT
            )
            out.append(Entry(id=f"{key}:private", ts=ts, payload=made, authorId=creator))
        last = None
        for m in c.messages:
            chat_id = f"slack:{c.channel}:{m.ts}"  # the same id, whichever thread it is in
            author = self._agent(m.author)
            chat = self._chat(thread, m, author, chat_id, client)
            out.append(Entry(id=chat_id, ts=now_ms(), payload=chat, authorId=author))
            last = chat_id
            if m.edited and author:
                edit = EntryEdited(entryId=chat_id, text=chat.text or "…")
                out.append(Entry(id=f"{chat_id}:edit", ts=now_ms(), payload=edit, authorId=author))
            for n, (emoji, user) in enumerate(m.reactions):
                who = self._agent(user)
                if who:
                    r = EntryReaction(entryId=chat_id, emoji=emoji)
                    out.append(Entry(id=f"{chat_id}:r{n}", ts=now_ms(), payload=r, authorId=who))
            if m.deleted:
                gone = EntryDeleted(entryId=chat_id)
                out.append(Entry(id=f"{chat_id}:del", ts=now_ms(), payload=gone, authorId=author))
        if last is not None:
            settled = DirectorOutcome(upTo=last, picked=[], reason=SETTLED)
            out.append(Entry(id=f"{key}:settled", ts=now_ms(), payload=settled))
        if c.archived:
            out.append(
                Entry(id=f"{key}:archived", ts=now_ms(), payload=ThreadArchived(archived=True))
            )
        return out

    def _chat(self, thread, m: Planned, author: str | None, chat_id: str, client) -> Chat:
        text = to_markdown(m.text[: MAX_CHAT_CHARS * 2], self.handles, self.plan.channel_names)
        if m.deleted and not text.strip():
            text = "(deleted in Slack)"
        refs, links = [], []
        for f in m.files:
            row = None
            if client is not None and author:
                row = slack_files.store(client, thread, author, f, self.token)
            if row is None:
                links.append(slack_files.link_line(f))
                self.result.files_linked += 1
            else:
                row.entry_id = chat_id
                row.save(update_fields=["entry_id"])
                refs.append(ref_of(row))
                self.result.files_stored += 1
        if links:
            text = "\n".join([text, *links]) if text else "\n".join(links)
        if len(text) > MAX_CHAT_CHARS:
            text = text[: MAX_CHAT_CHARS - 1] + "…"
        if not text and not refs:
            text = "(empty message)"
        return Chat(text=text, attachments=refs[:20], sentAt=m.sent_at)
