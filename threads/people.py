"""Who is in a private thread or direct conversation, as pages and answers show them: its
members by name, and a direct conversation's title for one viewer (the other people's
names, not the stored title, which names everyone)."""

from __future__ import annotations

from collections.abc import Iterable

from houses.models import Agent
from threads.models import Thread, ThreadMember

NAMED = 4  # names in a direct conversation's title; the rest are counted


def members_of(thread: Thread) -> list[Agent]:
    """The people and bots reading a private thread, by name (none for an open thread)."""
    if not thread.is_private:
        return []
    agents = Agent.objects.filter(
        pk__in=ThreadMember.objects.filter(thread=thread).values("agent_id")
    )
    return sorted(agents, key=lambda a: (a.kind != Agent.Kind.PERSON, a.display_name.lower()))


def direct_title(names: Iterable[str], fallback: str) -> str:
    """ "Mia", "Mia, Ari", "Mia, Ari, Jo, Bo and 2 more" (just you: ``fallback``)."""
    names = sorted(names, key=str.lower)
    if not names:
        return fallback
    if len(names) > NAMED:
        return ", ".join(names[:NAMED]) + f" and {len(names) - NAMED} more"
    return ", ".join(names)


def direct_titles(threads: Iterable[Thread], viewer_id: str | None) -> dict[str, str]:
    """Thread id -> its title for ``viewer_id``, for the direct conversations among
    ``threads`` (one query)."""
    direct = {t.pk: t for t in threads if t.is_direct}
    if not direct:
        return {}
    others: dict[str, list[str]] = {pk: [] for pk in direct}
    rows = ThreadMember.objects.filter(thread_id__in=list(direct)).exclude(agent_id=viewer_id)
    for thread_id, name in rows.values_list("thread_id", "agent__display_name"):
        others[thread_id].append(name)
    return {pk: direct_title(others[pk], "Just you") for pk in direct}


def title_for(thread: Thread, viewer_id: str | None) -> str:
    return direct_titles([thread], viewer_id).get(thread.pk, thread.title)
