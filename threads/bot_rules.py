"""Which bots answer a message that mentions nobody, as the compose box says it.

The director's rules (``dispatch.decide``): a bot whose involvement is ``everything``
answers every person's message in the house; the bot of a conversation between one person
and one bot answers that person's every message; a bot in a direct conversation answers
every message there, and in a private thread only the bots in it take part. They apply
without a mention, so the page says so where they apply. The conversation rule depends on
the viewer and on who has spoken, which changes while the page is open: the page gets who
has spoken (from the stored entry locations, not the log) and ``static/arbe/bot_rules.js``
keeps the line current from the chat entries that arrive.
"""

from __future__ import annotations

from dataclasses import dataclass

from houses.models import Agent
from threads.models import EntryLocation, ThreadMember


@dataclass(frozen=True)
class BotRules:
    everything: list[str]  # handles of the bots that answer every message in the house
    bots: dict[str, str]  # active bots that may hold a conversation: id -> handle
    people: list[str]  # people who have written chat in the thread (agent ids)
    speaking_bots: list[str]  # bots that have written chat in the thread (agent ids)
    direct: list[str] = ()  # bots of a direct conversation: they answer every message there

    @property
    def always(self) -> list[str]:
        """Bots that answer every message here whoever writes it (the page's script)."""
        return [*self.everything, *self.direct]

    def solo_bot(self, viewer_id: str) -> str | None:
        """The bot that answers ``viewer_id``'s every message, the thread being a
        conversation of the viewer and that one bot (as the director would see it after
        the viewer's next message), unless it answers everything anyway."""
        if len(self.speaking_bots) != 1 or any(p != viewer_id for p in self.people):
            return None
        handle = self.bots.get(self.speaking_bots[0])
        if handle in self.everything or handle in self.direct:
            return None
        return handle


def bot_rules(thread) -> BotRules:
    """Two queries: the house's bots (retired ones too: they count as having spoken), and
    the thread's chat authors."""
    bots = list(
        Agent.objects.filter(house_id=thread.house_id, kind=Agent.Kind.BOT)
        .order_by("handle")
        .values_list("id", "handle", "involvement", "provider", "model", "active")
    )
    authors = set(
        EntryLocation.objects.filter(thread_id=thread.pk, type="chat")
        .exclude(author_id="")
        .values_list("author_id", flat=True)
        .distinct()
    )
    if thread.is_private:  # only the bots in it take part (dispatch.decide)
        inside = set(ThreadMember.objects.filter(thread=thread).values_list("agent_id", flat=True))
        bots = [bot for bot in bots if bot[0] in inside]
    bot_ids = {bot[0] for bot in bots}
    direct = thread.is_direct
    return BotRules(
        everything=[
            handle
            for _, handle, involvement, provider, model, active in bots
            if involvement == Agent.Involvement.EVERYTHING
            and provider
            and model
            and active
            and not direct  # in a direct conversation each says so once, as its bot
        ],
        bots={agent_id: handle for agent_id, handle, *_, active in bots if active},
        people=sorted(authors - bot_ids),
        speaking_bots=sorted(authors & bot_ids),
        direct=[b[1] for b in bots if b[5]] if direct else [],
    )
