"""What a bot is handed for a reply, built from the chat projection.

Pi keeps a session file per thread and bot, so a reply normally sends only the
messages the bot hasn't seen. A tombstone must keep a deleted message from the
model on later turns, and Pi's session file can't forget: when a message the bot
was handed is deleted, the reply starts a fresh session generation seeded with
the projected history, which no longer holds it.

A prompt is bounded whatever the thread holds: the history and the new messages each
give the newest messages that fit ``PROMPT_MESSAGES`` and ``PROMPT_CHARS``, and say how
many earlier ones they leave out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from dispatch.decide import StartReply
from dispatch.pi import layout
from houses.models import Agent
from threads.attached import with_files
from threads.entries import (
    Chat,
    DispatchStarted,
    DispatchSteered,
    Entry,
    EntryDeleted,
    EntryEdited,
)
from threads.log import async_log_reader
from threads.models import Thread, stream_name_for
from threads.projection import chat_projection
from threads.reading import read_entries
from threads.unreadable import readable

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
    thread = Thread.objects.select_related("house").get(pk=start.thread_id)
    bot = Agent.objects.get(pk=start.agent_id)
    entries, offset = read_entries(thread.id)
    chat = chat_projection(entries)
    seen, generation = seen_by(bot.id, entries)
    source = ensure_agent_dir()
    session_file = layout.session_file(thread.house_id, thread.id, bot.id, f"g{generation}")
    authors = {m.authorId for m in chat if m.authorId}
    names = dict(Agent.objects.filter(pk__in=authors).values_list("id", "display_name"))
    convo = Conversation(
        thread=thread,
        bot=bot,
        stream=stream_name_for(thread.id),
        prompt="",
        offset=offset,
        session_file=session_file,
        workspace=layout.workspace(bot.id, thread.id),
        agent_dir=layout.bot_agent_dir(bot, source),
        env=bot_env(bot, source),
        names=names,
    )
    # What the bot answers: the messages it was started for, never its own, never deleted.
    wanted = set(start.entry_ids)
    to_answer = [m for m in chat if m.id in wanted and m.authorId != bot.id]
    convo.asked_since_ms = max((m.ts for m in to_answer), default=0)
    if session_file.exists():
        unseen = [m for m in chat if m.id not in seen and m.authorId != bot.id]
        convo.prompt = convo.render(unseen or to_answer)
    else:
        convo.prompt = seed_prompt(convo, chat, to_answer, replies_to_deleted(entries, bot.id))
    return convo


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


def seen_by(bot_id: str, entries: list[Entry]) -> tuple[set[str], int]:
    """The chat the bot's Pi session holds, and its session generation.

    A reply hands the bot everything said before it (as history or as new messages) and
    whatever it steered in. Each deletion of something the bot had seen starts a new
    generation, so the next reply's session is seeded without it; so does each edit of
    something it had seen, so the next reply's session holds the latest text.
    """
    seen: set[str] = set()
    so_far: list[str] = []
    dispatches: set[str] = set()
    deleted: set[str] = set()
    for e in entries:
        payload = e.payload
        if isinstance(payload, Chat):
            so_far.append(e.id)
        elif isinstance(payload, DispatchStarted) and payload.agentId == bot_id:
            dispatches.add(payload.dispatchId)
            seen.update(so_far)
        elif isinstance(payload, DispatchSteered) and payload.dispatchId in dispatches:
            seen.update(payload.entryIds)
        elif isinstance(payload, EntryDeleted) and payload.entryId in seen:
            deleted.add(payload.entryId)
        elif isinstance(payload, EntryEdited) and payload.entryId in seen:
            deleted.add(e.id)  # an edit of what the session holds: reseed with the latest text
    return seen, len(deleted)


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
