"""Who is in a private thread or direct conversation, as pages and answers show them: its
members by name, and a direct conversation's title for one viewer (the other people's
names, not the stored title, which names everyone)."""

from __future__ import annotations

from collections.abc import Iterable

from houses.models import Agent
from threads.models import Thread, ThreadMember

NAMED = 4  # names in a direct conversation's title; the rest are counted
PEOPLE_SHOWN = 40  # people and bots the house page offers to message or add (one query)


def members_of(thread: Thread) -> list[Agent]:
    """The people and bots reading a private thread, by name (none for an open thread)."""
    if not thread.is_private:
        return []
    agents = Agent.objects.filter(
        pk__in=ThreadMember.objects.filter(thread=thread).values("agent_id")
    )
    return sorted(agents, key=lambda a: (a.kind != Agent.Kind.PERSON, a.display_name.lower()))


def house_people(house, user=None) -> list[Agent]:
    """The house's people (but ``user``, if given) and active bots, by name, at most
    ``PEOPLE_SHOWN``: whom a page offers a direct conversation with, or a private thread."""
    from django.db.models import Q

    found = (
        Agent.objects.filter(
            Q(user__memberships__house=house, user__is_active=True)
            | Q(kind=Agent.Kind.BOT, house=house, active=True)
        )
        .only("id", "display_name", "handle", "kind")
        .order_by("-kind", "display_name")  # people first
        .distinct()
    )
    if user is not None:
        found = found.exclude(user=user)
    return list(found[:PEOPLE_SHOWN])


def direct_title(names: Iterable[str], fallback: str) -> str:
    """ "Mia", "Mia, Ari", "Mia, Ari, Jo, Bo and 2 more" (just you: ``fallback``)."""
    names = sorted(names, key=str.lower)
    if not names:
        return fallback
    if len(names) > NAMED:
        return ", ".join(names[:NAMED]) + f" and {len(names) - NAMED} more"
    return ", ".join(names)


def direct_titles(threads: Iterable[Thread], *, user=None, agent_id=None) -> dict[str, str]:
    """Thread id -> its title for the viewer (``user``, or ``agent_id``), for the direct
    conversations among ``threads``: one query, none when there are none."""
    direct = {t.pk: t for t in threads if t.is_direct}
    if not direct:
        return {}
    others: dict[str, list[str]] = {pk: [] for pk in direct}
    rows = ThreadMember.objects.filter(thread_id__in=list(direct))
    if user is not None:
        rows = rows.exclude(agent__user_id=user.pk)
    else:
        rows = rows.exclude(agent_id=agent_id)
    for thread_id, name in rows.values_list("thread_id", "agent__display_name"):
        others[thread_id].append(name)
    return {pk: direct_title(others[pk], "Just you") for pk in direct}


def title_for(thread: Thread, agent_id: str | None) -> str:
    return direct_titles([thread], agent_id=agent_id).get(thread.pk, thread.title)


def label_rows(rows: list[dict], user) -> list[dict]:
    """Each list row (``{"thread": …}``) with ``title`` as ``user`` sees it and ``kind``
    (house, private, direct: the lock or the person mark beside it)."""
    titles = direct_titles([r["thread"] for r in rows], user=user)
    for row in rows:
        thread = row["thread"]
        row["title"] = titles.get(thread.pk, thread.title)
        row["kind"] = thread.visibility
    return rows


def people_context(thread: Thread, exclude=None, readers=None) -> dict:
    """The thread page's people panel, the same for every viewer (it is also sent live to
    every open page when its members change): the members, and whom the starter or an owner
    could add (or make it private with; ``exclude``: a user left out of that list).
    ``readers``: who reads it as the log says, when the table may not have caught up."""
    from threads.entry_views import avatar
    from threads.narration import Name

    if readers is None:
        members = members_of(thread)
    else:
        thread.visibility = readers.visibility  # this render's copy, as the log says
        found = Agent.objects.filter(pk__in=readers.members) if thread.is_private else []
        members = sorted(found, key=lambda a: (a.is_bot, a.display_name.lower()))
    inside = {a.pk for a in members}
    offered = []
    if not thread.is_direct and thread.parent_id is None:
        offered = [a for a in house_people(thread.house, exclude) if a.pk not in inside]
    rows = [
        {
            "id": a.pk,
            "name": a.display_name,
            "handle": a.handle,
            "bot": a.is_bot,
            "avatar": avatar(a.pk, Name(a.display_name, a.handle, a.is_bot)),
        }
        for a in members
    ]
    return {"thread": thread, "members": rows, "offered": offered}


def people_fragment(thread_id: str, changes) -> str:
    """The people panel and the header's line, out of band, after ``changes`` (the access
    entries just appended). The table follows the log a moment later (the seam's step), so
    the panel is the table with the changes applied again: each is a set or a replacement,
    the same whether or not the table has them already."""
    from django.template.loader import render_to_string

    from threads.readers import readers_of_row

    thread = Thread.objects.select_related("house").filter(pk=thread_id).first()
    if thread is None:
        return ""
    readers = readers_of_row(thread)
    for entry in changes:
        readers = readers.apply(entry)
    context = people_context(thread, readers=readers) | {"oob": True}
    return render_to_string("threads/_people.html", context)


def page_people(access, user) -> dict:
    """What the thread page shows of who reads it: the panel (``people_context``), its
    title for the viewer and whether the viewer may change who reads it."""
    thread = access.thread
    viewer_id = access.principal.agent_id
    people = people_context(thread, exclude=None if thread.is_private else user)
    shown = thread.title
    if thread.is_direct:
        others = [m["name"] for m in people["members"] if m["id"] != viewer_id]
        shown = direct_title(others, "Just you")
    return people | {
        "title_shown": shown,
        "may_manage": thread.created_by_id == viewer_id or access.is_owner,
        "member_handles": [m["handle"] for m in people["members"]],
    }
