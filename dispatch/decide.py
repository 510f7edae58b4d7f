"""Who owes a reply: the director's decision, as a pure function of messages and bots.

- A bot mentioned by handle (``@helper``) owes a reply; a bot never answers itself.
- A person's message that mentions no bot goes to the thread's bot when exactly one
  bot has taken part in the thread (a one-bot conversation).
- A mentioned bot without a provider or model can't answer: the pass is blocked
  until a person configures it.
- Bots talking among themselves stop after ``MAX_BOT_CHAIN`` messages in a row;
  a person's message starts them again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from threads.entries import Chat, Entry

MENTION = re.compile(r"(?<![\w@])@([a-z0-9][a-z0-9_-]{0,31})\b")
MAX_BOT_CHAIN = 6

NO_MENTION = "No bot was mentioned."
BOT_CHAIN = "The bots have talked among themselves long enough; a person's message restarts them."


@dataclass(frozen=True)
class BotInfo:
    id: str
    handle: str
    configured: bool


@dataclass(frozen=True)
class Decision:
    picked: list[str] = field(default_factory=list)
    reason: str | None = None
    blocked: bool = False


def mentions(text: str) -> list[str]:
    seen: list[str] = []
    for handle in MENTION.findall(text.lower()):
        if handle not in seen:
            seen.append(handle)
    return seen


def decide(
    messages: list[Entry],
    bots: list[BotInfo],
    *,
    thread_bots: set[str],
    bot_chain: int,
) -> Decision:
    """Which bots owe a reply to ``messages`` (undecided chat, in order)."""
    by_handle = {b.handle: b for b in bots}
    by_id = {b.id: b for b in bots}
    picked: list[BotInfo] = []
    for message in messages:
        if not isinstance(message.payload, Chat):
            continue
        from_bot = message.authorId in by_id
        named = [by_handle[h] for h in mentions(message.payload.text) if h in by_handle]
        if from_bot:
            named = [b for b in named if b.id != message.authorId]
        elif not named and len(thread_bots) == 1:
            (only,) = thread_bots
            named = [by_id[only]] if only in by_id else []
        picked.extend(b for b in named if b not in picked)
    if not picked:
        authored_by_bots = all(m.authorId in by_id for m in messages)
        return Decision(reason=None if authored_by_bots else NO_MENTION)
    if bot_chain >= MAX_BOT_CHAIN and all(m.authorId in by_id for m in messages):
        return Decision(reason=BOT_CHAIN)
    unconfigured = [b for b in picked if not b.configured]
    if unconfigured:
        names = ", ".join(f"@{b.handle}" for b in unconfigured)
        return Decision(reason=f"{names} has no model configured.", blocked=True)
    return Decision(picked=[b.id for b in picked])
