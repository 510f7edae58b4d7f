"""The house page's socket: thread rows and badges kept live from house events.

``threads.status_sync.announce`` sends ``thread.status`` after a status write and
``threads.recency`` sends ``thread.row`` after a new entry or a new thread; the row
is re-rendered from the database row, which stays the truth if an event is lost.
Every (re)connect starts with the whole list, fresh, so a page catches up on what
it missed between its render and the socket, or while offline. Rows are rendered
per connection (they carry the person's unread count), and
``threads.unread.mark_read`` sends ``thread.read`` to every house page of the
person who read, so a thread opened in one tab clears in the others.
House events ride the channel layer, which may lose one (a Redis blip while the socket
stays open); so every ``RESYNC_S`` the socket also compares a fingerprint of the house's
rows (one aggregate query) with the one its last list had, and sends the list again when
they differ: a lost event leaves a page stale for at most that long.
Non-members are closed with 4404; a socket whose right ends later is closed by
``houses.revocation``'s event (4404 removed, 4401 signed out).
"""

import asyncio
import contextlib

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.http import Http404

from arbe_lib.sockets import QuickDispatch
from houses.access import access_house, event_reaches, house_threads
from houses.fragments import list_fragment, row_fragment
from houses.revocation import Reader, ends, socket_session_end, stop_waiting, user_group
from houses.yours_socket import YoursFollower
from threads.consumers import NOT_A_MEMBER
from threads.models import Thread
from threads.unread import reads_group


@database_sync_to_async
def house_access(user, slug):
    try:
        return access_house(user, slug)
    except Http404:
        return None


RESYNC_S = 30.0


def rows_fingerprint(house_id: int, user=None) -> tuple:
    """What changes whenever a row of the house's list would: threads coming, going or
    archived, any status write (``status_rev``), any new entry (``last_entry_ts``: a rename
    or an archive is an entry too)."""
    from django.db.models import Count, Max, Q, Sum

    # The rows this person sees (``user`` None: every row, for the bench).
    rows = (
        Thread.objects.filter(house_id=house_id) if user is None else house_threads(user, house_id)
    )
    found = rows.aggregate(
        live=Count("pk", filter=Q(archived_at__isnull=True)),
        latest=Max("last_entry_ts"),
        revs=Sum("status_rev"),
        archived=Max("archived_at"),
    )
    return tuple(found.values())


class HouseConsumer(QuickDispatch, YoursFollower, AsyncWebsocketConsumer):
    house_id = None
    reader = None
    grouped = False
    session_end = None  # the task that ends the read when its session expires
    resync = None
    fingerprint = None

    async def connect(self):
        self.user = self.scope["user"]
        if self.user.is_authenticated:  # joined before the check: no revocation falls between
            await self.channel_layer.group_add(user_group(self.user.pk), self.channel_name)
            self.grouped = True
        access = await house_access(self.user, self.scope["url_route"]["kwargs"]["slug"])
        await self.accept()
        if access is None:
            await self.close(code=NOT_A_MEMBER)
            return
        self.house_id = access.house.pk
        self.reader = Reader.of_session(self.scope.get("session"), self.house_id)
        self.session_end = socket_session_end(self)
        await self.channel_layer.group_add(f"house-{self.house_id}", self.channel_name)
        await self.channel_layer.group_add(reads_group(self.user.pk), self.channel_name)
        await self.follow_yours(house_id=self.house_id, side=True)  # the sidebar, the bell
        # Subscribed first, then the snapshot: nothing falls between the page and the socket.
        await self.send_list()
        self.resync = asyncio.create_task(self.resync_forever())

    async def send_list(self) -> None:
        self.fingerprint = await database_sync_to_async(rows_fingerprint)(self.house_id, self.user)
        await self.send(
            text_data=await database_sync_to_async(list_fragment)(self.house_id, self.user)
        )

    async def resync_forever(self) -> None:
        """Send the list again when the rows moved and no event may have said so."""
        while self.reader is not None:
            await asyncio.sleep(RESYNC_S)
            if self.reader is None:
                return
            now = await database_sync_to_async(rows_fingerprint)(self.house_id, self.user)
            if now != self.fingerprint and self.reader is not None:
                await self.send_list()

    async def thread_status(self, event):
        # Rendered per connection: the row carries this person's unread count.
        if self.reader is None or not event_reaches(event, self.user.pk):
            return  # ended (a row already queued is not sent), or a private thread not theirs
        html = await database_sync_to_async(row_fragment)(self.house_id, event["thread"], self.user)
        if html:
            await self.send(text_data=html)
        await self.send_yours(event)  # the sidebar's row

    # New entries move a row too (``threads.recency`` announces it when no status changed).
    thread_row = thread_status

    async def thread_read(self, event):
        """This person read a thread (in any tab): its unread count clears where the row is."""
        if self.reader is None:
            return
        html = await database_sync_to_async(row_fragment)(
            self.house_id, event["thread"], self.user, move=False
        )
        if html:
            await self.send(text_data=html)
        await self.send_yours(event)  # the sidebar's row, other houses, the bell

    async def board_rows(self, event):
        """Board rows changed: the board page's own socket renders those; nothing here."""

    async def access_revoked(self, event):
        if self.reader is not None and ends(event, self.reader):
            await self.stop_following()
            await self.close(code=event["code"])
        elif (
            self.reader is not None and event.get("thread") and event.get("house") == self.house_id
        ):
            await self.send_list()  # out of a private thread: its row leaves the list

    async def stop_following(self) -> None:
        """Out of the house's groups: no row reaches a socket whose right ended."""
        self.reader = None
        await self.unfollow_yours()
        if self.resync is not None:
            self.resync.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.resync
            self.resync = None
        if self.house_id is not None:
            await self.channel_layer.group_discard(f"house-{self.house_id}", self.channel_name)
            await self.channel_layer.group_discard(reads_group(self.user.pk), self.channel_name)
            self.house_id = None

    async def disconnect(self, code):
        await stop_waiting(self.session_end)
        await self.stop_following()
        if self.grouped:
            await self.channel_layer.group_discard(user_group(self.user.pk), self.channel_name)
