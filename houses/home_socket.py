"""The houses page's socket: a house's row (status, unread total) and the tab title's
total follow that house's events, as the house page's rows do (``houses.consumers``).

It listens to every house of the person (``house-<id>``) and to their reads
(``reads-<user id>``); each event re-renders the one row it concerns, from the
database, which stays the truth if an event is lost. Every (re)connect starts with all
rows fresh. A house the person leaves drops out. Its right to read ends as the thread
socket's does (``houses.revocation``): signing out of *this* session, its running out,
deactivation or a new password close it 4401; another session signing out or an API token
revoked leave it be.
"""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.template.loader import render_to_string

from arbe_lib.sockets import QuickDispatch
from houses.access import event_reaches, houses_of
from houses.home import house_row_fragment, house_rows
from houses.revocation import Reader, ends, socket_session_end, stop_waiting, user_group
from houses.yours_socket import YoursFollower, bell_fragment, notice_fragment
from threads.models import Thread
from threads.unread import reads_group


def _house_ids(user) -> list[int]:
    return list(houses_of(user).values_list("pk", flat=True))


def _all_rows(user) -> str:
    rows, total = house_rows(user)
    return render_to_string(
        "houses/_house_rows_oob.html", {"rows": rows, "unread_total": total, "oob": True}
    )


def _row_for_thread(user, thread_id: str) -> str:
    house_id = Thread.objects.filter(pk=thread_id).values_list("house_id", flat=True).first()
    if house_id is None or not houses_of(user).filter(pk=house_id).exists():
        return ""
    return house_row_fragment(user, house_id)


def _inbox_list(user, event: dict | None = None) -> str:
    """The inbox page's list, fresh, with the bell (and a notice for a new item)."""
    from notify.inbox_views import inbox_context

    context = inbox_context(user) | {"oob": True}
    html = render_to_string("notify/_inbox_list.html", context)
    html += render_to_string("notify/_inbox_bell.html", context)
    title = {"unread_total": context["inbox_count"], "oob": True}  # the tab title's count
    html += render_to_string("houses/_unread_total.html", title)
    if event is not None and event.get("type") == "inbox.item":
        html += notice_fragment(user, event.get("entry", ""))
    return html


class HomeConsumer(QuickDispatch, YoursFollower, AsyncWebsocketConsumer):
    """``/ws/home/``: the houses page's socket; with ``?view=inbox``, the inbox page's."""

    groups_joined: list[str]
    reader: Reader | None = None
    session_end = None

    async def connect(self):
        self.user = self.scope["user"]
        self.groups_joined = []
        query = self.scope.get("query_string", b"")
        self.inbox_view = b"view=inbox" in query
        self.bar_view = b"view=bar" in query  # a page with no socket of its own: the bell
        await self.accept()
        if not self.user.is_authenticated:
            await self.close(code=4401)
            return
        await self._join(user_group(self.user.pk))
        self.reader = Reader.of_session(self.scope.get("session"))
        self.session_end = socket_session_end(self)
        await self._join(reads_group(self.user.pk))
        await self.follow_yours(house_id=None, side=False)  # the bell and notices
        if self.inbox_view:
            await self.send(text_data=await database_sync_to_async(_inbox_list)(self.user))
            return
        if self.bar_view:
            await self.send(text_data=await database_sync_to_async(bell_fragment)(self.user))
            return
        for house_id in await database_sync_to_async(_house_ids)(self.user):
            await self._join(f"house-{house_id}")
        await self.send(text_data=await database_sync_to_async(_all_rows)(self.user))
        await self.send(text_data=await database_sync_to_async(bell_fragment)(self.user))

    async def inbox_item(self, event):
        if self.inbox_view:
            await self.send(text_data=await database_sync_to_async(_inbox_list)(self.user, event))
        else:
            await self.send_yours(event)

    inbox_changed = inbox_item

    async def _join(self, group: str) -> None:
        await self.channel_layer.group_add(group, self.channel_name)
        self.groups_joined.append(group)

    async def thread_status(self, event):
        if self.inbox_view or self.bar_view or not event_reaches(event, self.user.pk):
            return
        html = await database_sync_to_async(_row_for_thread)(self.user, event["thread"])
        if html:
            await self.send(text_data=html)

    thread_row = thread_status

    async def thread_read(self, event):
        """A thread read (any tab): its house's row, and the bell (the read read its items)."""
        if self.inbox_view:
            await self.send(text_data=await database_sync_to_async(_inbox_list)(self.user))
            return
        if not self.bar_view:
            await self.thread_status(event)
        await self.send(text_data=await database_sync_to_async(bell_fragment)(self.user))

    async def board_rows(self, event):
        """Board rows: the board page's business."""

    async def access_revoked(self, event):
        house = event.get("house")
        if event.get("thread"):  # out of a private thread: its house's row and items redraw
            if self.inbox_view:
                await self.send(text_data=await database_sync_to_async(_inbox_list)(self.user))
            elif self.bar_view:
                await self.send(text_data=await database_sync_to_async(bell_fragment)(self.user))
            else:
                await self.thread_status({"thread": event["thread"]})
            return
        if house is None:  # signed out, a new password, deactivated: if it's this session's
            if self.reader is not None and ends(event, self.reader):
                self.reader = None
                await self.close(code=event["code"])
            return
        if self.inbox_view:  # the house's items leave the list
            await self.send(text_data=await database_sync_to_async(_inbox_list)(self.user))
            return
        if self.bar_view:  # the house's items leave the count
            await self.send(text_data=await database_sync_to_async(bell_fragment)(self.user))
            return
        group = f"house-{house}"
        if group in self.groups_joined:
            await self.channel_layer.group_discard(group, self.channel_name)
            self.groups_joined.remove(group)
        await self.send(text_data=f'<li id="house-{int(house)}" hx-swap-oob="delete"></li>')

    async def disconnect(self, code):
        await self.unfollow_yours()
        await stop_waiting(self.session_end)
        for group in self.groups_joined:
            await self.channel_layer.group_discard(group, self.channel_name)
        self.groups_joined = []
