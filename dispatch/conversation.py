"""What a bot is handed for a reply, built from the chat projection.

Pi keeps a session file per thread and bot, so a reply normally sends only the
messages the bot hasn't seen. A tombstone must keep a deleted message from the
model on later turns, and Pi's session file can't forget: when a message the bot
was handed is deleted, the reply starts a fresh session generation seeded with
the projected history, which no longer holds it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from dispatch.director import StartReply
from houses.models import Agent
from threads.entries import (
    Chat,
    DispatchStarted,
    DispatchSteered,
    Entry,
    EntryDeleted,
)
from threads.log import async_log_reader
from threads.models import Thread, stream_name_for
from threads.projection import chat_projection
from threads.reading import read_entries
from threads.unreadable import readable


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

    def render(self, messages: list[Entry]) -> str:
        return "\n\n".join(
            f"[{self.names.get(m.authorId or '', 'someone')}]: {m.payload.text}" for m in messages
        )


def ensure_agent_dir() -> Path:
    """Pi's agent dir: the operator's own (``PI_AGENT_DIR``, their providers and keys), or
    a managed one under ``PI_HOME`` that serves the built-in demo model."""
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
    root = Path(settings.PI_HOME)
    session_file = root / "sessions" / f"{thread.id}-{bot.id}-g{generation}.jsonl"
    authors = {m.authorId for m in chat if m.authorId}
    names = dict(Agent.objects.filter(pk__in=authors).values_list("id", "display_name"))
    convo = Conversation(
        thread=thread,
        bot=bot,
        stream=stream_name_for(thread.id),
        prompt="",
        offset=offset,
        session_file=session_file,
        workspace=root / "workspaces" / bot.id / thread.id,
        agent_dir=ensure_agent_dir(),
        env=bot_env(bot),
        names=names,
    )
    if session_file.exists():
        unseen = [m for m in chat if m.id not in seen and m.authorId != bot.id]
        convo.prompt = convo.render(unseen or [m for m in chat if m.id in start.entry_ids])
    else:
        convo.prompt = (
            f"You are @{bot.handle} in the thread “{thread.title}”. The conversation so far:\n\n"
            + convo.render(chat)
            + "\n\nReply to the latest messages."
        )
    return convo


def seen_by(bot_id: str, entries: list[Entry]) -> tuple[set[str], int]:
    """The chat the bot's Pi session holds, and its session generation.

    A reply hands the bot everything said before it (as history or as new messages) and
    whatever it steered in. Each deletion of something the bot had seen starts a new
    generation, so the next reply's session is seeded without it.
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
    return seen, len(deleted)


def bot_env(bot: Agent) -> dict[str, str]:
    """The provider key the bot names by variable, and nothing else of ours."""
    name = bot.api_key_env
    return {name: os.environ[name]} if name and name in os.environ else {}


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
