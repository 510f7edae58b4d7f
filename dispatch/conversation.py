"""What a bot is handed for a reply, built from the chat projection.

Pi keeps a session file per thread and bot, so a reply normally sends only the
messages the bot hasn't seen: those after its session's mark (``dispatch.session_mark``),
read from the mark's offset, never the whole log. A tombstone must keep a deleted message
from the model on later turns, and Pi's session file can't forget: when a message the
session holds is deleted (or edited: bots read the latest text), the reply starts a fresh
session generation seeded with the projected history of a bounded tail, which no longer
holds it.

A prompt is bounded whatever the thread holds: the history and the new messages each
give the newest messages that fit ``PROMPT_MESSAGES`` and ``PROMPT_CHARS``, and say how
many earlier ones they leave out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from dispatch import session_mark
from dispatch.decide import StartReply
from dispatch.pi import layout
from dispatch.session_mark import SessionMark
from houses.models import Agent
from streams.errors import StreamError
from threads.attached import with_files
from threads.entries import (
    Chat,
    DispatchStarted,
    DispatchSteered,
    Entry,
    EntryDeleted,
    EntryEdited,
    first_of_each_id,
)
from threads.log import async_log_reader
from threads.models import Thread, stream_name_for
from threads.now_view import WAITING_SHOWN
from threads.projection import chat_projection
from threads.reading import read_entries
from threads.unreadable import readable
from threads.windows import read_tail

PROMPT_MESSAGES = 200  # messages in the history, or in the new messages, at most
PROMPT_CHARS = 60_000  # and their text, at most (the newest message always goes)


@dataclass
class Conversation:
    thread: Thread
    bot: Agent
    stream: str
    prompt: str
    offset: str  # the stream tail when the reply began: steering looks past it
    session_file: Path
    workspace: Path
    agent_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    mark: SessionMark | None = None  # what the session holds once this reply hands it over
    asked_since_ms: int = 0  # the newest message answered was posted then (ops.metrics)

    def render(self, messages: list[Entry]) -> str:
        """Messages as "[Name]: text" paragraphs; the bot's own are labelled as its own.

        Only the newest that fit the prompt's bounds; a line says how many are left out."""
        shown = newest_within(messages)
        lines = [
            f"[{self.speaker(m)}]: {with_files(m.payload.text, m.payload.attachments)}"
            for m in shown
        ]
        if len(shown) < len(messages):
            left = len(messages) - len(shown)
            lines.insert(0, f"({left:,} earlier message{'s' if left != 1 else ''} not shown.)")
        return "\n\n".join(lines)

    def speaker(self, message: Entry) -> str:
        if message.authorId == self.bot.id:
            return f"you, @{self.bot.handle}"
        return self.names.get(message.authorId or "", "someone")


def newest_within(messages: list[Entry]) -> list[Entry]:
    """The newest of ``messages`` within ``PROMPT_MESSAGES`` and ``PROMPT_CHARS``."""
    kept, chars = [], 0
    for message in reversed(messages[-PROMPT_MESSAGES:]):
        chars += len(message.payload.text)
        if kept and chars > PROMPT_CHARS:
            break
        kept.append(message)
    return kept[::-1]


def ensure_agent_dir() -> Path:
    """The server's agent dir: the operator's own (``PI_AGENT_DIR``, their providers and
    keys), or a managed one under ``PI_HOME`` that serves the built-in demo model. No Pi
    reads it: each bot gets its own copy of what it needs (``layout.bot_agent_dir``)."""
    if settings.PI_AGENT_DIR:
        return Path(settings.PI_AGENT_DIR)
    from dispatch.pi.config import DEMO_PROVIDER, demo_provider, write_agent_dir

    return write_agent_dir(Path(settings.PI_HOME) / "agent", {DEMO_PROVIDER: demo_provider()})


def load_conversation(start: StartReply) -> Conversation:
    """What the bot is handed: the messages since its session's mark (``session_mark``), or,
    for a fresh session (none yet, or a message it holds deleted or edited since), a seed
    from a bounded tail of the thread. Never the whole log of a marked thread."""
    thread = Thread.objects.select_related("house").get(pk=start.thread_id)
    bot = Agent.objects.get(pk=start.agent_id)
    where = (thread.house_id, thread.id, bot.id)
    found = session_mark.load(session_mark.mark_path(*where))
    since = None
    if found is not None and session_mark.session_path(*where, found.generation).exists():
        try:
            entries, offset = read_entries(thread.id, found.offset)
        except StreamError:  # an offset the server no longer knows: reseed
            entries, offset = [], ""
        if offset:
            since = unseen_since(bot.id, entries)
    wanted = set(start.entry_ids)
    if since is not None and not since.reseed:
        chat = since.chat
        generation = found.generation
        missing = wanted - {m.id for m in chat}
        if missing:  # taken in before the mark, still owed (a resumed reply): hand them again
            tail, _, _ = read_tail(thread.id, WAITING_SHOWN)
            chat = [m for m in chat_projection(tail) if m.id in missing] + chat
    else:
        entries, offset, _ = read_tail(thread.id, PROMPT_MESSAGES)
        chat = chat_projection(entries)
        after = found.generation if found is not None else -1
        generation = session_mark.fresh_generation(*where, after=after)
    source = ensure_agent_dir()
    authors = {m.authorId for m in chat if m.authorId}
    names = dict(Agent.objects.filter(pk__in=authors).values_list("id", "display_name"))
    convo = Conversation(
        thread=thread,
        bot=bot,
        stream=stream_name_for(thread.id),
        prompt="",
        offset=offset,
        session_file=session_mark.session_path(*where, generation),
        workspace=layout.workspace(bot.id, thread.id),
        agent_dir=layout.bot_agent_dir(bot, source),
        env=bot_env(bot, source),
        names=names,
        mark=session_mark.SessionMark(generation, offset),
    )
    # What the bot answers: the messages it was started for, never its own, never deleted.
    to_answer = [m for m in chat if m.id in wanted and m.authorId != bot.id]
    convo.asked_since_ms = max((m.ts for m in to_answer), default=0)
    if since is not None and not since.reseed:
        unseen = [m for m in chat if m.authorId != bot.id]
        convo.prompt = convo.render(unseen or to_answer)
    else:
        convo.prompt = seed_prompt(convo, chat, to_answer, replies_to_deleted(entries, bot.id))
    return convo


@dataclass
class Since:
    chat: list[Entry]  # chat after the mark the session doesn't hold (deleted gone, edits applied)
    reseed: bool  # the session holds a message since deleted or edited: start a fresh one


def unseen_since(bot_id: str, entries: list[Entry]) -> Since:
    """What the entries after a session's mark mean for it. Everything before the mark is in
    the session, and so is what the bot's replies steered in since; a tombstone or an edit of
    any of that asks for a fresh session (so the model never reads a deleted message again,
    and reads the latest text of an edited one). The bot's own chat is its session's own."""
    entries = first_of_each_id(entries)
    here = {e.id for e in entries if isinstance(e.payload, Chat)}
    steered: set[str] = set()
    reseed = False
    for e in entries:
        p = e.payload
        if isinstance(p, DispatchSteered) and e.authorId == bot_id:
            steered.update(p.entryIds)
        elif isinstance(p, EntryDeleted | EntryEdited):
            reseed = reseed or p.entryId not in here or p.entryId in steered
    chat = [m for m in chat_projection(entries) if m.id not in steered and m.authorId != bot_id]
    return Since(chat, reseed)


def save_mark(convo: Conversation) -> None:
    if convo.mark is not None:
        where = (convo.thread.house_id, convo.thread.id, convo.bot.id)
        session_mark.save(session_mark.mark_path(*where), convo.mark)


def seed_prompt(convo: Conversation, chat: list[Entry], to_answer: list[Entry], dropped) -> str:
    """A fresh session's first prompt: the history as context, then what to answer.

    The history leaves out the bot's replies to messages since deleted (they would
    repeat what was deleted); the bot's other messages are labelled as its own.
    """
    answering = {m.id for m in to_answer}
    history = [m for m in chat if m.id not in answering and m.id not in dropped]
    intro = f"You are @{convo.bot.handle} in the thread “{convo.thread.title}”."
    parts = [intro]
    if history:
        parts += ["The conversation so far:", convo.render(history)]
    if to_answer:
        parts += ["New messages for you:", convo.render(to_answer), "Reply to the new messages."]
    else:
        parts += ["Reply to the latest messages."]
    return "\n\n".join(parts)


def replies_to_deleted(entries: list[Entry], bot_id: str) -> set[str]:
    """The bot's chat replies whose every taken-in message has since been deleted."""
    deleted = {e.payload.entryId for e in entries if isinstance(e.payload, EntryDeleted)}
    taken: dict[str, list[str]] = {}
    current: str | None = None
    dropped: set[str] = set()
    for e in entries:
        p = e.payload
        if isinstance(p, DispatchStarted) and p.agentId == bot_id:
            current = p.dispatchId
            taken[current] = list(p.entryIds)
        elif isinstance(p, DispatchSteered) and p.dispatchId in taken:
            taken[p.dispatchId] += p.entryIds
        elif isinstance(p, Chat) and e.authorId == bot_id and current is not None:
            ids = taken[current]
            if ids and all(i in deleted for i in ids):
                dropped.add(e.id)
            current = None  # a reply posts one answer
    return dropped


def bot_env(bot: Agent, agent_dir: Path | None = None) -> dict[str, str]:
    """The provider key the bot needs (from the variable it names, else its provider's usual
    one, if the rule of ``dispatch/pi/keys.py`` admits it), and nothing else of ours.

    ``agent_dir`` is the server's agent dir, the one the bot's own is generated from."""
    from dispatch.pi.providers import key_environment

    return key_environment(bot.provider, bot.api_key_env, agent_dir or ensure_agent_dir())


async def new_messages(convo: Conversation, offset: str) -> tuple[list[Entry], str]:
    """Chat that arrived after ``offset`` from others, minus any deleted meanwhile."""
    result = await async_log_reader().catch_up(convo.stream, offset)
    arrived = readable(result.messages or (), convo.stream)
    gone = {e.payload.entryId for e in arrived if isinstance(e.payload, EntryDeleted)}
    chat = [
        e
        for e in arrived
        if isinstance(e.payload, Chat) and e.authorId != convo.bot.id and e.id not in gone
    ]
    return chat, result.next_offset
