"""Who an outbox item notifies, and why: the person's level, the thread's mode, mentions and
the bots they asked. Never the author; never someone who can no longer read the thread."""

from __future__ import annotations

from dataclasses import dataclass

from dispatch.decide import mentions
from houses.access import readers_of
from houses.models import Agent
from notify.models import (
    Asked,
    HouseNotify,
    Level,
    NotifySettings,
    Outbox,
    ThreadMode,
    ThreadNotify,
)
from threads.models import Thread


class Reason:
    MENTION = "mention"
    DIRECT = "direct"  # a message in a direct conversation of theirs: addressed to them
    BOT = "bot"  # a bot they asked answered, or its run finished
    ALL = "all"


@dataclass(frozen=True)
class Recipient:
    user_id: int
    email: str  # confirmed only ("" when none): a waiting address is never here
    reason: str
    email_on: bool


def recipients(item: Outbox, thread: Thread, author: Agent | None) -> list[Recipient]:
    readers = {u.pk: u for u in readers_of(thread)}
    if author is not None and author.user_id is not None:
        readers.pop(author.user_id, None)  # never your own message
    if not readers:
        return []
    levels = {s.user_id: s for s in NotifySettings.objects.filter(user_id__in=readers)}
    modes = dict(
        ThreadNotify.objects.filter(thread=thread, user_id__in=readers).values_list(
            "user_id", "mode"
        )
    )
    house_muted = set(
        HouseNotify.objects.filter(house_id=thread.house_id, user_id__in=readers).values_list(
            "user_id", flat=True
        )
    )
    mentioned: set[int] = set()
    if item.kind == Outbox.Kind.CHAT:
        handles = mentions(item.text)
        if handles:
            mentioned = set(
                Agent.objects.filter(
                    kind=Agent.Kind.PERSON, handle__in=handles, user_id__in=readers
                ).values_list("user_id", flat=True)
            )
    asked: set[int] = set()
    if author is not None and author.kind == Agent.Kind.BOT:
        row = Asked.objects.filter(thread=thread, bot_id=author.pk).first()
        asked = set(row.user_ids) if row else set()
    out = []
    for user_id, user in readers.items():
        mode = modes.get(user_id)
        if mode == ThreadMode.MUTE or (user_id in house_muted and mode != ThreadMode.ALL):
            continue  # a muted house is silent, but for a thread followed on purpose
        chosen = levels.get(user_id)
        level = chosen.level if chosen else Level.MENTIONS
        if user_id in mentioned:
            reason = Reason.MENTION
        elif thread.is_direct and item.kind == Outbox.Kind.CHAT:
            reason = Reason.DIRECT
        elif user_id in asked:
            reason = Reason.BOT
        else:
            reason = Reason.ALL
        wanted = mode == ThreadMode.ALL or (
            level == Level.ALL or (level == Level.MENTIONS and reason != Reason.ALL)
        )
        if wanted:
            email_on = chosen.email if chosen else True
            out.append(Recipient(user_id, user.email, reason, email_on))
    return out
