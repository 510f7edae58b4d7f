"""Private threads and direct conversations: starting them and changing who is in them.

Each change is an entry first (``signal.thread.made_private|member_added|member_removed``,
appended through the writer seam, whose ``readers`` step folds it into the access table:
``threads.readers``), so the log says who could read what, when. A delegated run's child
thread reads as its parent does: changes to a parent are appended to its private children
too. Who may make these changes is decided in ``houses.access`` (``access_readers``).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import IntegrityError
from django.db.models import Q

from houses.models import Agent, House, Membership
from threads.entries import ThreadMadePrivate, ThreadMemberAdded, ThreadMemberRemoved
from threads.lifecycle import create_thread, new_entry
from threads.models import Thread, Visibility
from threads.readers import Readers, direct_key, readers_of_row
from threads.recency import announce_row, stream_writer
from threads.signals import MAX_THREAD_MEMBERS

# People and bots in one direct conversation, its starter included (Slack's group DMs
# stop at nine too); a larger group is a private thread.
MAX_DIRECT = 9


class PrivacyError(ValueError):
    """The change can't be made; the message says why (a 400 for the caller)."""


def house_agents(house: House, agent_ids: Iterable[str]) -> list[Agent]:
    """The agents named, each a person in ``house`` or an active bot of it; else refused."""
    wanted = list(dict.fromkeys(a for a in agent_ids if a))
    if len(wanted) > MAX_THREAD_MEMBERS:
        raise PrivacyError(f"A private thread has at most {MAX_THREAD_MEMBERS} members.")
    people = Membership.objects.filter(house=house).values("user__agent")
    found = Agent.objects.filter(pk__in=wanted).filter(
        Q(pk__in=people) | Q(kind=Agent.Kind.BOT, house=house, active=True)
    )
    agents = {a.pk: a for a in found}
    if any(a not in agents for a in wanted):
        raise PrivacyError("Everyone in a private thread must be in its house.")
    return [agents[a] for a in wanted]


def start_private(house: House, title: str, by: Agent, members: Iterable[str]) -> Thread:
    """A new thread read only by ``by`` and ``members``."""
    agents = house_agents(house, [by.pk, *members])
    readers = Readers(Visibility.PRIVATE, frozenset(a.pk for a in agents))
    return create_thread(house=house, title=title, by=by, readers=readers)


def open_direct(house: House, by: Agent, others: Iterable[str]) -> tuple[Thread, bool]:
    """The one direct conversation of ``by`` with ``others`` (started if there is none),
    and whether it is new. The set of people is its identity: asking again reopens it."""
    agents = house_agents(house, [by.pk, *others])
    if len(agents) > MAX_DIRECT:
        raise PrivacyError(
            f"A direct conversation has at most {MAX_DIRECT} people and bots; "
            "start a private thread for more."
        )
    ids = frozenset(a.pk for a in agents)
    existing = Thread.objects.filter(house=house, direct_key=direct_key(ids)).first()
    if existing is not None:
        return existing, False
    title = ", ".join(sorted(a.display_name for a in agents))[:200]
    try:
        thread = create_thread(
            house=house, title=title, by=by, readers=Readers(Visibility.DIRECT, ids)
        )
    except IntegrityError:  # started at the same moment by someone else: theirs stands
        return Thread.objects.get(house=house, direct_key=direct_key(ids)), False
    return thread, True


def make_private(thread: Thread, by: Agent, members: Iterable[str]) -> Thread:
    """An open thread read from now on only by ``by`` and ``members`` (and its runs)."""
    _check_not_a_run(thread)
    if thread.is_private:
        raise PrivacyError("This thread is already private.")
    agents = house_agents(thread.house, [by.pk, *members])
    payload = ThreadMadePrivate(memberIds=sorted(a.pk for a in agents))
    for each in _with_children(thread):
        _append(each, payload, by)
    thread.refresh_from_db()
    return thread


def add_member(thread: Thread, agent_id: str, by: Agent) -> bool:
    """``agent_id`` reads the private thread from now on; False if they already did."""
    _check_changeable(thread)
    if agent_id in readers_of_row(thread).members:
        return False
    house_agents(thread.house, [agent_id])
    for each in _with_children(thread):
        _append(each, ThreadMemberAdded(agentId=agent_id), by)
    return True


def remove_member(thread: Thread, agent_id: str, by: Agent) -> bool:
    """``agent_id`` stops reading the private thread; their live reads end. False if they
    weren't in it. The last member can't be removed (nobody could read it again)."""
    _check_changeable(thread)
    members = readers_of_row(thread).members
    if agent_id not in members:
        return False
    if members == {agent_id}:
        raise PrivacyError("The last member of a private thread can't be removed.")
    for each in _with_children(thread):
        _append(each, ThreadMemberRemoved(agentId=agent_id), by)
    return True


def _check_changeable(thread: Thread) -> None:
    _check_not_a_run(thread)
    if thread.is_direct:
        raise PrivacyError(
            "A direct conversation's people are what it is: start another one instead."
        )
    if not thread.is_private:
        raise PrivacyError("Everyone in the house reads this thread; make it private first.")


def _check_not_a_run(thread: Thread) -> None:
    if thread.parent_id is not None:  # its readers follow its parent's (``_with_children``)
        raise PrivacyError("A run's thread reads as its parent: change who reads that one.")


def _with_children(thread: Thread) -> list[Thread]:
    """The thread and its delegated runs' threads (and theirs), which read as it does."""
    found, frontier = [thread], [thread.pk]
    while frontier:
        children = list(Thread.objects.filter(parent_id__in=frontier))
        found.extend(children)
        frontier = [c.pk for c in children]
    return found


def _append(thread: Thread, payload, by: Agent) -> None:
    stream_writer().append(thread.stream_name, new_entry(payload, author=by.pk))
    announce_row(thread.pk)
