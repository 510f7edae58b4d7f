"""The house page's socket: thread rows and badges kept live from house events.

``threads.status_sync.announce`` sends ``thread.status`` after a status write and
``threads.recency`` sends ``thread.row`` after a new entry or a new thread; the row
is re-rendered from the database row, which stays the truth if an event is lost.
Every (re)connect starts with the whole list, fresh, so a page catches up on what
it missed between its render and the socket, or while offline. Rows are rendered
per connection (they carry the person's unread count), and
``threads.unread.mark_read`` sends ``thread.read`` to every house page of the
person who read, so a thread opened in one tab clears in the others.
Non-members are closed with 4404; a socket whose right ends later is closed by
``houses.revocation``'s event (4404 removed, 4401 signed out).
"""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.http import Http404

from houses.access import access_house
from houses.fragments import list_fragment, row_fragment
from houses.revocation import Reader, ends, user_group
from threads.consumers import NOT_A_MEMBER
from threads.unread import reads_group


@database_sync_to_async
def house_access(user, slug):
    try:
        return access_house(user, slug)
    except Http404:
        return None


class HouseConsumer(AsyncWebsocketConsumer):
    house_id = None
    reader = None
    grouped = False

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
        await self.channel_layer.group_add(f"house-{self.house_id}", self.channel_name)
        await self.channel_layer.group_add(reads_group(self.user.pk), self.channel_name)
        # Subscribed first, then the snapshot: nothing falls between the page and the socket.
        await self.send(
            text_data=await database_sync_to_async(list_fragment)(self.house_id, self.user)
        )

    async def thread_status(self, event):
        # Rendered per connection: the row carries this person's unread count.
        if self.reader is None:  # ended: a row already queued is not sent
            return
        html = await database_sync_to_async(row_fragment)(self.house_id, event["thread"], self.user)
        if html:
            await self.send(text_data=html)

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

    async def board_rows(self, event):
        """Board rows changed: the board page's own socket renders those; nothing here."""

    async def access_revoked(self, event):
        if self.reader is not None and ends(event, self.reader):
            await self.stop_following()
            await self.close(code=event["code"])

    async def stop_following(self) -> None:
        """Out of the house's groups: no row reaches a socket whose right ended."""
        self.reader = None
        if self.house_id is not None:
            await self.channel_layer.group_discard(f"house-{self.house_id}", self.channel_name)
            await self.channel_layer.group_discard(reads_group(self.user.pk), self.channel_name)
            self.house_id = None

    async def disconnect(self, code):
        await self.stop_following()
        if self.grouped:
            await self.channel_layer.group_discard(user_group(self.user.pk), self.channel_name)
