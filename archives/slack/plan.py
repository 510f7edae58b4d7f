"""Reading a Slack export whole into a plan, before anything is written.

Every file the import reads is decoded and checked here (a malformed one is refused
naming the file and line, and nothing is written); the plan holds, per conversation, its
messages in time order with what each carries. Mapping Slack's ids to people here, and
messages to entries, is ``archives.slack.importer``'s.

Conversations: ``channels.json`` (public channels) become open threads; ``groups.json``
(private channels) and ``mpims.json`` (group messages) private threads of their members;
``dms.json`` direct conversations. Each conversation's messages are in a folder named as
the channel (DMs: by id), one JSON file per day. Replies in a Slack thread stay in their
channel's thread, in time order (docs/data.md says why), or with ``split_replies`` become a
thread of their own.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field, replace

from archives.slack import shapes
from archives.slack.emoji import emoji_of
from archives.slack.mrkdwn import ANGLE
from archives.zipsafe import ArchiveError, SafeZip
from houses.names import one_line
from threads.reactions import is_emoji

DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.json$")
SKIPPED = {
    "channel_join",
    "channel_leave",
    "channel_topic",
    "channel_purpose",
    "channel_name",
    "channel_archive",
    "channel_unarchive",
    "group_join",
    "group_leave",
    "group_topic",
    "group_purpose",
    "group_name",
    "pinned_item",
    "unpinned_item",
}
SLACKBOT = "USLACKBOT"


@dataclass
class Person:
    slack_id: str
    username: str
    display: str
    email: str = ""
    deleted: bool = False
    bot: bool = False


@dataclass
class Planned:
    ts: str
    sent_at: int
    author: str  # a Slack user id, or "bot:<name>" for a bot's message
    text: str
    edited: bool = False
    deleted: bool = False
    reactions: list[tuple[str, str]] = field(default_factory=list)  # (emoji, slack user)
    files: list[shapes.File] = field(default_factory=list)
    thread_ts: str = ""  # the Slack thread it replies in ("" or its own ts: not a reply)

    @property
    def is_reply(self) -> bool:
        return bool(self.thread_ts) and self.thread_ts != self.ts


@dataclass
class Conversation:
    id: str
    title: str
    kind: str  # open | private | direct
    members: list[str]
    creator: str
    archived: bool
    messages: list[Planned] = field(default_factory=list)
    channel: str = ""  # the Slack conversation its messages are in (their ids name it)
    parent: str = ""  # replies as a thread of their own: the channel's conversation id

    def __post_init__(self):
        self.channel = self.channel or self.id


def _plain(text: str) -> str:
    """A title's words from mrkdwn: links and mentions by their label, on one line."""
    text = ANGLE.sub(lambda m: m.group(1).partition("|")[2] or "…", text)
    return one_line(html.unescape(text))


def split_replies(c: Conversation) -> list[Conversation]:
    """``--replies-as-threads``: the channel without its replies, then one conversation per
    Slack thread with replies, a child of the channel's, titled by its first message."""
    main = [m for m in c.messages if not m.is_reply]
    groups: dict[str, list[Planned]] = {}
    for m in c.messages:
        if m.is_reply:
            groups.setdefault(m.thread_ts, []).append(m)
    first = {m.ts: m for m in main}
    out = [replace(c, messages=main)]
    for thread_ts, replies in groups.items():
        opener = first.get(thread_ts)
        words = _plain(opener.text if opener else replies[0].text)[:80]
        out.append(
            replace(
                c,
                id=f"{c.id}-{thread_ts}",
                title=f"{c.title} · {words}"[:200] if words else c.title,
                messages=replies,
                channel=c.channel,
                parent=c.id,
                archived=False,
            )
        )
    return out


@dataclass
class Plan:
    people: dict[str, Person]
    conversations: list[Conversation]
    channel_names: dict[str, str]
    skipped: int = 0  # joins, leaves, topic changes: Slack's own notices
    messages: int = 0


def _optional(archive: SafeZip, name: str, type_) -> list:
    return shapes.read_list(archive, name, type_) if name in archive.members else []


def read_plan(archive: SafeZip) -> Plan:
    if "users.json" not in archive.members or "channels.json" not in archive.members:
        raise ArchiveError("not a Slack export: users.json and channels.json are missing")
    people: dict[str, Person] = {}
    for u in shapes.read_list(archive, "users.json", shapes.User):
        display = u.profile.display_name or u.profile.real_name or u.real_name or u.name or u.id
        people[u.id] = Person(u.id, u.name or u.id, display, u.profile.email, u.deleted, u.is_bot)
    plan = Plan(people, [], {})
    sources = [
        ("channels.json", "open"),
        ("groups.json", "private"),
        ("mpims.json", "private"),
        ("dms.json", "direct"),
    ]
    for doc, kind in sources:
        for c in _optional(archive, doc, shapes.Channel):
            folder = c.id if doc == "dms.json" else c.name
            if kind == "direct":
                names = [people[m].display if m in people else m for m in c.members]
                title = "Direct: " + ", ".join(names)
            else:
                title = f"#{c.name}" if kind == "open" else c.name
            plan.channel_names[c.id] = c.name or c.id
            # Titles are one line without hidden characters, as arbe's own (houses.names).
            conversation = Conversation(
                c.id, one_line(title)[:200] or c.id, kind, list(c.members), c.creator, c.is_archived
            )
            _read_messages(archive, folder, conversation, plan)
            plan.conversations.append(conversation)
    return plan


def _read_messages(archive: SafeZip, folder: str, c: Conversation, plan: Plan) -> None:
    days = sorted(
        n
        for n in archive.members
        if n.startswith(f"{folder}/") and DAY_FILE.match(n[len(folder) + 1 :])
    )
    seen: set[str] = set()
    for day in days:
        for m in shapes.read_list(archive, day, shapes.Message):
            where = f"{day}, message at {m.ts}"
            if m.type != "message" or m.subtype in SKIPPED:
                plan.skipped += 1
                continue
            sent_at = shapes.ts_ms(m.ts, day)
            if m.ts in seen:
                continue  # the same message in two files (an export's overlap): once
            seen.add(m.ts)
            c.messages.append(_planned(m, sent_at, where, plan))
    c.messages.sort(key=lambda p: p.sent_at)
    plan.messages += len(c.messages)


def _planned(m: shapes.Message, sent_at: int, where: str, plan: Plan) -> Planned:
    if m.subtype == "bot_message" or (not m.user and (m.bot_id or m.username)):
        author = f"bot:{m.username or m.bot_id}"
    elif m.user and m.user != SLACKBOT:
        author = m.user
    else:
        author = "bot:slackbot"  # Slack's own messages (and its "deleted" placeholders)
    text = m.text
    if m.subtype == "me_message" and text:
        text = f"_{text}_"
    reactions = []
    for r in m.reactions:
        emoji = emoji_of(r.name)
        if emoji is None or not is_emoji(emoji):
            continue  # a custom emoji: not carried
        reactions += [(emoji, user) for user in r.users]
    files = [f for f in m.files if f.mode not in ("tombstone", "hidden_by_limit") and f.id]
    deleted = m.subtype == "tombstone"
    return Planned(
        ts=m.ts,
        sent_at=sent_at,
        author=author,
        text=text,
        edited=m.edited is not None,
        deleted=deleted,
        reactions=reactions,
        files=files,
        thread_ts=m.thread_ts,
    )
