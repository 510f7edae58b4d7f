"""Who owes a reply: the director's decision, as a pure function of messages and bots.

- A bot mentioned by handle (``@helper``) owes a reply; a bot never answers itself.
- A person's message that mentions no bot goes to every bot whose involvement is
  ``everything``, and to the thread's bot when the thread is a conversation with it
  (exactly one person and one bot have ever spoken there).
- A mention directs a message: only the bots it names answer it.
- A bot that already took a message in (it started for it, or steered it in) doesn't
  owe it again: each message is answered at most once per bot.
- A mentioned (or conversation) bot without a provider or model can't answer: the pass
  is blocked until a person configures it. A mention of a retired bot is answered by
  nobody, and says so. Ordinary chat gives no reason: nobody expected an answer.
- In a private thread or direct conversation only the bots in it take part: a mention of
  a bot that isn't a member is answered by nobody, and says so; ``everything`` bots
  outside it stay out. A bot in a direct conversation answers every person's message
  there that mentions no bot (a direct conversation with a bot is the private way to work
  with it; docs/bots.md).
- Bots talking among themselves stop after ``MAX_BOT_CHAIN`` messages in a row;
  a person's message starts them again.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass, field

from threads.entries import Chat, Entry
from threads.mentioning import MENTION, mentions  # noqa: F401 (re-exported)

MAX_BOT_CHAIN = 6
MENTIONS, EVERYTHING = "mentions", "everything"

NOT_IN_THREAD = "{} isn't in this private thread, so it can't read it or answer."

BOT_CHAIN = "The bots have talked among themselves long enough; a person's message restarts them."


@dataclass(frozen=True)
class StartReply:
    """A pass asks for this bot's reply to these messages."""

    thread_id: str
    agent_id: str
    entry_ids: list[str]
    round: int


@dataclass(frozen=True)
class BotInfo:
    id: str
    handle: str
    configured: bool
    involvement: str = MENTIONS
    active: bool = True
    reads: bool = True  # false: the thread is private and the bot isn't in it
    direct: bool = False  # one of the people of a direct conversation


@dataclass(frozen=True)
class Decision:
    picked: list[str] = field(default_factory=list)
    reason: str | None = None
    blocked: bool = False


@dataclass(frozen=True)
class Speakers:
    """Who has ever spoken in the thread: people and bots (chat authors)."""

    people: frozenset[str] = frozenset()
    bots: frozenset[str] = frozenset()

    def conversation_bot(self) -> str | None:
        """The bot of a one-person, one-bot conversation, if the thread is one."""
        if len(self.people) == 1 and len(self.bots) == 1:
            (only,) = self.bots
            return only
        return None


NAMED = 5  # handles a reason names; a reason is one short line whatever a message mentions


def handles(bots: list[BotInfo]) -> str:
    names = ", ".join(f"@{b.handle}" for b in bots[:NAMED])
    return f"{names} and {len(bots) - NAMED} more" if len(bots) > NAMED else names


def decide(
    messages: list[Entry],
    bots: list[BotInfo],
    *,
    speakers: Speakers = Speakers(),
    bot_chain: int = 0,
    answered: Mapping[str, Set[str]] | None = None,
) -> Decision:
    """Which bots owe a reply to ``messages`` (undecided chat, in order).

    ``bots`` holds the house's bots, retired ones too (``active=False``), so a mention
    of a retired bot can be told apart from a handle that is no bot's. ``answered`` maps
    a message id to the bots that already took it in.
    """
    answered = answered or {}
    by_handle = {b.handle: b for b in bots}
    by_id = {b.id: b for b in bots}
    conversation = by_id.get(speakers.conversation_bot() or "")
    if conversation is not None and not conversation.reads:
        conversation = None
    picked: list[BotInfo] = []
    retired: list[BotInfo] = []
    outside: list[BotInfo] = []
    for message in messages:
        if not isinstance(message.payload, Chat):
            continue
        named = [by_handle[h] for h in mentions(message.payload.text) if h in by_handle]
        named = [b for b in named if b.id != message.authorId]  # never to itself
        outside += [b for b in named if b.active and not b.reads and b not in outside]
        named = [b for b in named if b.reads or not b.active]
        if not named and message.authorId not in by_id:
            named = [
                b
                for b in bots
                if b.active and b.reads and (b.direct or b.involvement == EVERYTHING)
                if b.configured or b.direct
            ]
            if conversation is not None and conversation.active and conversation not in named:
                named.append(conversation)
        for bot in named:
            if bot.id in answered.get(message.id, ()):
                continue
            target = picked if bot.active else retired
            if bot not in target:
                target.append(bot)
    if not picked:
        if retired:
            return Decision(reason=f"{handles(retired)} is no longer in this house.")
        if outside:
            return Decision(reason=NOT_IN_THREAD.format(handles(outside)))
        return Decision()
    if bot_chain >= MAX_BOT_CHAIN and all(m.authorId in by_id for m in messages):
        return Decision(reason=BOT_CHAIN)
    unconfigured = [b for b in picked if not b.configured]
    if unconfigured:
        return Decision(reason=f"{handles(unconfigured)} has no model configured.", blocked=True)
    return Decision(picked=[b.id for b in picked])
