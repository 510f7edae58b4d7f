"""Live reads end with the right to read (docs/security.md, "Live reads end …").

Access is checked when a socket connects or a stream read starts; what ends the right
later is announced here, and only here, as one ``access.revoked`` event to the person's
``user-<id>`` group (over the channel layer, so across Daphne processes):

- signing out (``user_logged_out``): that session's reads, close 4401;
- deactivation (``is_active`` set false by any save) and deleting the person: all of
  their reads, 4401;
- a password change: the reads of sessions whose stored hash no longer matches (the
  sessions Django itself stops accepting), 4401; API-token reads go on, as the tokens do;
- an API token revoked or deleted: the reads made with it, 4401;
- a membership deleted (``remove_member``, or a cascade from deleting the person or the
  house): their reads of that house, 4404 (as if it never existed);
- a member row of a private thread deleted (``threads.readers``: removed from it): their
  reads of that thread, 4404; an open thread made private: the reads of it by everyone
  in the house not among its members, 4404 (``thread_closed``).

Every socket and live proxy read joins the group *before* its access check, so a change
between the check and the join can't be missed, and describes itself as a ``Reader``;
``ends`` says whether an event is for it. Events go out after the commit: a reader that
looks again sees the change.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db import transaction
from django.db.models.signals import post_delete, post_init, post_save

from arbe_lib.events import send_to_group
from houses.models import ApiToken, Membership

SIGNED_OUT = 4401  # the session or token that opened the read no longer signs anyone in
NO_ACCESS = 4404  # no longer a member: the same code as never having been one
EVENT = "access.revoked"


def user_group(user_id) -> str:
    """Every live read of one person (sockets and proxy streams)."""
    return f"user-{user_id}"


def tag(secret: str | None) -> str | None:
    """A short digest naming a session key or session hash in events, never the value."""
    if not secret:
        return None
    return hashlib.sha256(f"{settings.SECRET_KEY}:{secret}".encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Reader:
    """What one live read was opened with."""

    house: int | None = None
    session: str | None = None  # tag of the session key (session-cookie reads)
    session_hash: str | None = None  # tag of the session's stored auth hash
    token: int | None = None  # the API token's id (token reads)
    thread: str | None = None  # the thread a thread read follows (house reads: None)

    @classmethod
    def of_session(cls, session, house: int | None = None, thread: str | None = None) -> Reader:
        key = getattr(session, "session_key", None)
        stored = session.get(HASH_SESSION_KEY) if session is not None else None
        return cls(house=house, session=tag(key), session_hash=tag(stored), thread=thread)


def ends(event: dict, reader: Reader) -> bool:
    """Is ``event`` the end of ``reader``'s right to read?"""
    if event.get("house") is not None and event["house"] != reader.house:
        return False
    if event.get("thread") is not None and event["thread"] != reader.thread:
        return False
    if event.get("session") is not None and event["session"] != reader.session:
        return False
    if event.get("token") is not None and event["token"] != reader.token:
        return False
    if "password" in event:  # a new password: only sessions still on the old hash end
        return reader.token is None and event["password"] != reader.session_hash
    return True


def revoke(user_id, code: int, **scope) -> None:
    """Announce, after the commit, that ``user_id``'s reads in ``scope`` end with ``code``.

    ``scope``: ``house``, ``session``, ``token``, ``password`` (see ``ends``); none: all.
    """
    event = {"type": EVENT, "code": code, **scope}
    transaction.on_commit(lambda: send_to_group(user_group(user_id), event))


# -- what ends the right --------------------------------------------------------------------


def _signed_out(sender, request, user, **kwargs) -> None:
    session = getattr(request, "session", None)
    if user is not None and session is not None and session.session_key:
        revoke(user.pk, SIGNED_OUT, session=tag(session.session_key))


def _remember_user(sender, instance, **kwargs) -> None:
    # What the row held when loaded: a save can then tell what it changed, with no query.
    instance._live_reads_state = (instance.is_active, instance.password)


def _user_saved(sender, instance, created, **kwargs) -> None:
    was_active, old_password = getattr(instance, "_live_reads_state", (True, None))
    instance._live_reads_state = (instance.is_active, instance.password)
    if created:
        return
    if was_active and not instance.is_active:
        revoke(instance.pk, SIGNED_OUT)
    elif old_password is not None and instance.password != old_password:
        revoke(instance.pk, SIGNED_OUT, password=tag(instance.get_session_auth_hash()))


def _user_deleted(sender, instance, **kwargs) -> None:
    revoke(instance.pk, SIGNED_OUT)


def _membership_deleted(sender, instance, **kwargs) -> None:
    revoke(instance.user_id, NO_ACCESS, house=instance.house_id)


def _thread_member_deleted(sender, instance, **kwargs) -> None:
    from houses.models import Agent
    from threads.models import Thread

    user_id = Agent.objects.filter(pk=instance.agent_id).values_list("user_id", flat=True).first()
    if user_id is None:  # a bot's sandbox reads by token for one reply; fenced there
        return
    # The house rides along: the person's house and houses pages redraw their lists
    # without the thread (their reads of the house go on: ``ends`` wants the thread too).
    house = Thread.objects.filter(pk=instance.thread_id).values_list("house_id", flat=True)
    revoke(user_id, NO_ACCESS, thread=instance.thread_id, house=house.first())


def thread_closed(thread_id: str, house_id: int, members) -> None:
    """An open thread became private: the live reads of it by the house's people not among
    ``members`` (agent ids) end, 4404, as a removal's do (``threads.readers.store``)."""
    people = (
        Membership.objects.filter(house_id=house_id)
        .exclude(user__agent__in=list(members))
        .values_list("user_id", flat=True)
    )
    for user_id in people:
        revoke(user_id, NO_ACCESS, thread=thread_id, house=house_id)


def _remember_token(sender, instance, **kwargs) -> None:
    instance._live_reads_revoked = instance.revoked_at is not None


def _token_saved(sender, instance, created, **kwargs) -> None:
    was_revoked = getattr(instance, "_live_reads_revoked", False)
    instance._live_reads_revoked = instance.revoked_at is not None
    if not was_revoked and instance.revoked_at is not None:
        revoke(instance.user_id, SIGNED_OUT, token=instance.pk)


def _token_deleted(sender, instance, **kwargs) -> None:
    revoke(instance.user_id, SIGNED_OUT, token=instance.pk)


def connect_signals() -> None:
    """Called once from ``HousesConfig.ready``."""
    user = get_user_model()
    uid = "houses.revocation"
    user_logged_out.connect(_signed_out, dispatch_uid=f"{uid}.signed_out")
    post_init.connect(_remember_user, sender=user, dispatch_uid=f"{uid}.user_init")
    post_save.connect(_user_saved, sender=user, dispatch_uid=f"{uid}.user_saved")
    post_delete.connect(_user_deleted, sender=user, dispatch_uid=f"{uid}.user_deleted")
    post_delete.connect(_membership_deleted, sender=Membership, dispatch_uid=f"{uid}.member")
    post_delete.connect(
        _thread_member_deleted, sender="threads.ThreadMember", dispatch_uid=f"{uid}.reader"
    )
    post_init.connect(_remember_token, sender=ApiToken, dispatch_uid=f"{uid}.token_init")
    post_save.connect(_token_saved, sender=ApiToken, dispatch_uid=f"{uid}.token_saved")
    post_delete.connect(_token_deleted, sender=ApiToken, dispatch_uid=f"{uid}.token_deleted")


# -- a session's own end -------------------------------------------------------------------
# Nothing announces a session running out, so a read opened with one waits for its
# ``expire_date`` itself, and looks again then: a session used meanwhile may have been
# extended. Engines that keep no ``Session`` row (signed cookies, cache-only) aren't watched.
SESSION_ROW_ENGINES = (
    "django.contrib.sessions.backends.db",
    "django.contrib.sessions.backends.cached_db",
)
LOOK_AGAIN_S = 3600.0  # a long wait is cut into looks, so a moved expiry is seen within this


def session_ends_at(key: str):
    """When the session ``key`` stops signing anyone in; None when it no longer exists."""
    from django.contrib.sessions.models import Session

    rows = Session.objects.filter(session_key=key).values_list("expire_date", flat=True)
    return rows.first()


def until_session_ends(session, end: Callable[[], Awaitable[None]]) -> asyncio.Task | None:
    """A task that awaits ``end()`` once ``session`` has expired (or gone); cancel it when the
    read ends first. None for a read without a session row to watch."""
    key = getattr(session, "session_key", None)
    if not key or settings.SESSION_ENGINE not in SESSION_ROW_ENGINES:
        return None
    return asyncio.create_task(_wait_for_session_end(key, end))


async def _wait_for_session_end(key: str, end: Callable[[], Awaitable[None]]) -> None:
    from asgiref.sync import sync_to_async
    from django.utils import timezone

    while True:
        ends_at = await sync_to_async(session_ends_at)(key)
        left = 0.0 if ends_at is None else (ends_at - timezone.now()).total_seconds()
        if left <= 0:
            await end()
            return
        await asyncio.sleep(min(left + 0.05, LOOK_AGAIN_S))


async def stop_waiting(task: asyncio.Task | None) -> None:
    if task is not None and not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def socket_session_end(consumer) -> asyncio.Task | None:
    """For a socket consumer: when its session expires, the same event signing out sends,
    to its own channel, so its ``access_revoked`` handler closes it 4401 in turn."""

    async def end() -> None:
        await consumer.channel_layer.send(
            consumer.channel_name, {"type": EVENT, "code": SIGNED_OUT}
        )

    return until_session_ends(consumer.scope.get("session"), end)


# -- a live HTTP read (long-poll, SSE) ------------------------------------------------------


class Watch:
    """A proxy read's own channel in the person's group; ``ended`` is set by its event.

    Opened before the access check (``open``), given the reader once access is known
    (``follow``), closed when the read ends (``close``). Without a channel layer it
    never fires.
    """

    def __init__(self, user_id) -> None:
        self.group = user_group(user_id)
        self.ended = asyncio.Event()
        self.reader: Reader | None = None
        self.code: int | None = None  # the event's close code, once ended
        self._pending: list[dict] = []
        self._layer = None
        self._channel = None
        self._task: asyncio.Task | None = None
        self._expiry: asyncio.Task | None = None

    @classmethod
    async def open(cls, user_id) -> Watch:
        from channels.layers import get_channel_layer

        watch = cls(user_id)
        layer = get_channel_layer()
        if layer is not None:
            watch._layer = layer
            watch._channel = await layer.new_channel()
            await layer.group_add(watch.group, watch._channel)
            watch._task = asyncio.create_task(watch._listen())
        return watch

    def follow(self, reader: Reader, session=None) -> None:
        """``session``: the one a cookie read was opened with; its expiry ends the read."""
        self.reader = reader
        for event in self._pending:  # arrived between the join and the access check
            self._check(event)
        self._pending.clear()
        self._expiry = until_session_ends(session, self._session_ended)

    async def _session_ended(self) -> None:
        self.code = SIGNED_OUT
        self.ended.set()

    def _check(self, event: dict) -> None:
        if self.reader is None:
            self._pending.append(event)
        elif event.get("type") == EVENT and ends(event, self.reader):
            self.code = event["code"]
            self.ended.set()

    async def _listen(self) -> None:
        while not self.ended.is_set():
            self._check(await self._layer.receive(self._channel))

    async def close(self) -> None:
        await stop_waiting(self._expiry)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
            with contextlib.suppress(Exception):
                await self._layer.group_discard(self.group, self._channel)
