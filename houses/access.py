"""The one place that decides who may see and do what.

Every view, consumer and proxy resolves houses, threads and entries through
these helpers, given the requesting principal (or a session user for pages).
A caller who is not a member gets ``Http404`` — the same answer whether the
object exists or not. Callers that find an action refused after access was
granted get ``PermissionDenied`` (403).

Threads are read by their house's members, except private threads and direct
conversations (``Thread.visibility``), read only by their members (``ThreadMember``,
the fold of the thread's access entries: ``threads.readers``). Every list of threads
goes through ``readable`` and every single thread through ``access_thread``; nobody
else reads a private thread, house owners included (docs/permissions.md).
"""

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import Http404

from houses.models import House, HouseInvite, Membership, token_digest
from houses.principals import Principal
from threads.models import Thread, ThreadMember, Visibility, thread_id_of


@dataclass(frozen=True)
class HouseAccess:
    house: House
    membership: Membership

    @property
    def is_owner(self) -> bool:
        return self.membership.is_owner


@dataclass(frozen=True)
class ThreadAccess:
    thread: Thread
    principal: Principal
    membership: Membership | None  # None for a bot's sandbox and for the service

    @property
    def is_owner(self) -> bool:
        return self.membership is not None and self.membership.is_owner


def _membership(user, house_id) -> Membership | None:
    if user is None or not user.is_authenticated:
        return None
    return Membership.objects.filter(house_id=house_id, user=user).first()


def access_house(who, slug: str) -> HouseAccess:
    """The house ``slug`` and the caller's membership of it, or 404. ``who``: user or principal."""
    user = who.user if isinstance(who, Principal) else who
    if user is None or not user.is_authenticated:
        raise Http404
    membership = (
        Membership.objects.select_related("house").filter(house__slug=slug, user=user).first()
    )
    if membership is None:
        raise Http404
    return HouseAccess(membership.house, membership)


def access_owned_house(who, slug: str) -> HouseAccess:
    access = access_house(who, slug)
    if not access.is_owner:
        raise PermissionDenied("Only owners of the house may do that.")
    return access


def access_owned_bot(who, slug: str, handle: str):
    """An active bot of a house the caller owns, or 404 (403 for a member who isn't owner)."""
    house = access_owned_house(who, slug).house
    bot = house.bots.filter(handle=handle, active=True).first()
    if bot is None:
        raise Http404
    return bot


def houses_of(user):
    """Houses the caller is a member of."""
    if user is None or not user.is_authenticated:
        return House.objects.none()
    return House.objects.filter(memberships__user=user).order_by("name")


def threads_of(user):
    """Threads the caller reads: of their houses, open or with them as a member."""
    if user is None or not user.is_authenticated:
        return Thread.objects.none()
    return readable(Thread.objects.filter(house__memberships__user=user), user)


def read_by(user, prefix: str = "") -> Q:
    """The condition on threads (``prefix``: the path to one, e.g. ``"thread__"``) that
    ``user`` reads *within houses they are in*: open to the house, or with them in it.
    Callers still narrow to the user's houses (``houses_of``/``threads_of``). ``user`` may
    be a user id (a background job's)."""
    if isinstance(user, int):
        user_id = user
    elif user is None or not user.is_authenticated:
        return Q(pk__in=[])
    else:
        user_id = user.pk
    theirs = ThreadMember.objects.filter(agent__user_id=user_id).values("thread_id")
    return Q(**{f"{prefix}visibility": Visibility.HOUSE}) | Q(**{f"{prefix}pk__in": theirs})


def readable(threads: QuerySet, user) -> QuerySet:
    """``threads`` narrowed to those ``user`` may read (see ``read_by``)."""
    return threads.filter(read_by(user))


def hidden_from(user) -> QuerySet:
    """Ids of the private threads ``user`` doesn't read, in any house: a set for a query
    that lists rows of many threads by house (search) to leave out."""
    signed_in = user is not None and user.is_authenticated
    theirs = ThreadMember.objects.filter(agent__user_id=user.pk if signed_in else -1)
    return (
        Thread.objects.exclude(visibility=Visibility.HOUSE)
        .exclude(pk__in=theirs.values("thread_id"))
        .values("id")
    )


def house_threads(user, house_id) -> QuerySet:
    """The threads of one house that ``user`` reads (the caller checked the membership:
    ``access_house``). Every per-house list and count starts here."""
    return readable(Thread.objects.filter(house_id=house_id), user)


def audience(thread_id: str) -> list[int] | None:
    """Who a house-wide event about ``thread_id`` may reach: None for an open thread (every
    member of the house), else the user ids of its members (one query). Events carry it as
    ``readers`` (``event_reaches``) so each socket drops what isn't its person's without a
    query of its own."""
    row = Thread.objects.filter(pk=thread_id).values_list("visibility", flat=True).first()
    if row is None or row == Visibility.HOUSE:
        return None
    members = ThreadMember.objects.filter(thread_id=thread_id, agent__user__isnull=False)
    return sorted(members.values_list("agent__user_id", flat=True))


def event_reaches(event: dict, user_id) -> bool:
    """May a house event (``audience`` in its ``readers``) reach the socket of ``user_id``?"""
    readers = event.get("readers")
    return readers is None or user_id in readers


def reads_thread(user_or_agent_id, thread: Thread) -> bool:
    """May this person (a user, or an agent id) read ``thread``, given they are in its house?"""
    if not thread.is_private:
        return True
    if isinstance(user_or_agent_id, str):
        return ThreadMember.objects.filter(thread=thread, agent_id=user_or_agent_id).exists()
    return ThreadMember.objects.filter(thread=thread, agent__user=user_or_agent_id).exists()


def access_thread(principal: Principal | None, thread_id: str) -> ThreadAccess:
    """The thread and how the caller reaches it, or 404.

    People reach threads of their houses; a bot's sandbox reaches only the one
    stream its token names, in its own house; the service reaches everything.
    """
    if principal is None:
        raise Http404
    thread = Thread.objects.select_related("house").filter(pk=thread_id).first()
    if thread is None:
        raise Http404
    if principal.is_person:
        membership = _membership(principal.user, thread.house_id)
        if membership is None or not reads_thread(principal.user, thread):
            raise Http404
        return ThreadAccess(thread, principal, membership)
    if principal.is_bot:
        claims = principal.claims
        if (
            claims is None
            or claims.stream != thread.stream_name
            or principal.agent.house_id != thread.house_id
            or not reads_thread(principal.agent.id, thread)
        ):
            raise Http404
        return ThreadAccess(thread, principal, None)
    return ThreadAccess(thread, principal, None)


def access_person_thread(principal: Principal | None, thread_id: str) -> ThreadAccess:
    """A thread a person acts on through the people's routes (bots use the stream proxy)."""
    access = access_thread(principal, thread_id)
    if not principal.is_person:
        raise PermissionDenied("Sandbox writers append through /api/stream/<name>.")
    return access


def access_stream(principal: Principal | None, stream_name: str) -> ThreadAccess:
    """The thread behind a stream name, for the sandbox writers' proxy; 404 for other names."""
    thread_id = thread_id_of(stream_name)
    if thread_id is None:
        raise Http404
    return access_thread(principal, thread_id)


def access_delete(access: ThreadAccess, author_id: str | None) -> None:
    """May the caller tombstone an entry written by ``author_id``? Its author or an owner."""
    if (author_id or "") != (access.principal.agent_id or "") and not access.is_owner:
        raise PermissionDenied("Only the author or an owner of the house may delete this.")


def access_readers(access: ThreadAccess, agent_id: str | None = None) -> None:
    """May the caller change who reads the thread (make it private, add or remove members)?
    Its starter or an owner of the house, when they read it themselves (``access`` says
    so); anyone in a private thread may leave it (``agent_id``: their own)."""
    if agent_id is not None and agent_id == access.principal.agent_id:
        return
    if access.thread.created_by_id != access.principal.agent_id and not access.is_owner:
        raise PermissionDenied("Only whoever started the thread or an owner may change that.")


def access_purge(access: ThreadAccess, author_id: str | None) -> None:
    """May the caller remove the stored files of a message by ``author_id`` for good? Its
    author (whose uploads they are) or an owner."""
    if (author_id or "") != (access.principal.agent_id or "") and not access.is_owner:
        raise PermissionDenied("Only the message's author or an owner may remove its files.")


# Invite links: every miss is the same 404; guessing is slowed by houses.invite_limits.
def access_invite(token: str, client: str) -> HouseInvite:
    """The usable invite behind ``token``, or 404 (unknown, expired and revoked alike).

    ``client`` is the remote address. Misses are counted per address and per token prefix
    (``houses.invite_limits``); past a limit the answer is 404 without looking, except
    that an address over its limit may still use a token whose prefix is a live invite's.
    """
    from django.utils import timezone

    from houses import invite_limits

    live = HouseInvite.objects.filter(revoked_at__isnull=True, expires_at__gt=timezone.now())
    address_over, prefix_over = invite_limits.over_limits(client, token)
    if prefix_over:
        raise Http404
    # Invites made before prefixes were kept have none: they match any prefix.
    prefixes = [invite_limits.prefix_of(token), ""]
    if address_over and not live.filter(token_prefix__in=prefixes).exists():
        raise Http404
    invite = live.select_related("house").filter(token_hash=token_digest(token)).first()
    if invite is None:
        invite_limits.count_miss(client, token)
        raise Http404
    return invite


def readers_of(thread: Thread):
    """Active people who may read ``thread`` (its house's members, or of those its members
    when it is private): whom it may notify."""
    from django.contrib.auth import get_user_model

    people = get_user_model().objects.filter(memberships__house_id=thread.house_id, is_active=True)
    if thread.is_private:
        people = people.filter(agent__in=ThreadMember.objects.filter(thread=thread).values("agent"))
    return people.distinct()
