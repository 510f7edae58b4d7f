"""The board page's socket: ``board.rows`` house events become htmx out-of-band swaps.

``boards.service.store`` sends ``board.rows`` (created, updated and removed row ids) to
``house-<id>``; rows are re-rendered from the database, which stays the truth if an
event is lost. Other house events are not this socket's business and are ignored.
Non-members are closed with 4404; like every live read the socket is in ``user-<id>``
and closes when ``houses.revocation`` says its right ended (4404 removed, 4401 signed out).
"""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.http import Http404
from django.template.loader import render_to_string

from arbe_lib.sockets import QuickDispatch
from boards.models import BoardRow
from houses.access import access_house
from houses.revocation import EVENT, Reader, ends, socket_session_end, stop_waiting, user_group
from houses.yours_socket import YoursFollower

NOT_A_MEMBER = 4404


@database_sync_to_async
def house_id_for(user, slug):
    try:
        return access_house(user, slug).house.pk
    except Http404:
        return None


def rows_fragment(house_id: int, event: dict) -> str:
    ids = [*event.get("created", []), *event.get("updated", [])]
    rows = {
        row.pk: row
        for row in BoardRow.objects.filter(pk__in=ids, host__house_id=house_id).select_related(
            "host"
        )
    }
    return render_to_string(
        "boards/_rows_oob.html",
        {
            "created": [rows[pk] for pk in event.get("created", []) if pk in rows],
            "updated": [rows[pk] for pk in event.get("updated", []) if pk in rows],
            "removed": event.get("removed", []),
        },
    )


class BoardConsumer(QuickDispatch, YoursFollower, AsyncWebsocketConsumer):
    house_id = None
    reader = None
    grouped = False
    session_end = None  # the task that ends the read when its session expires

    async def connect(self):
        user = self.user = self.scope["user"]
        if user.is_authenticated:  # joined before the check: no revocation falls between
            await self.channel_layer.group_add(user_group(user.pk), self.channel_name)
            self.grouped = True
        house_id = await house_id_for(user, self.scope["url_route"]["kwargs"]["slug"])
        await self.accept()
        if house_id is None:
            await self.close(code=NOT_A_MEMBER)
            return
        self.house_id = house_id
        self.reader = Reader.of_session(self.scope.get("session"), house_id)
        self.session_end = socket_session_end(self)
        await self.channel_layer.group_add(f"house-{house_id}", self.channel_name)
        await self.follow_yours(house_id=None, side=False)  # the bell and notices

    async def dispatch(self, message):
        # The house group carries other engineers' events too; only ours have a handler here.
        ours = ("board.rows", EVENT, "inbox.item", "inbox.changed")
        if message["type"].startswith("websocket.") or message["type"] in ours:
            await super().dispatch(message)

    async def board_rows(self, event):
        if self.reader is None:  # ended: rows already queued are not sent
            return
        html = await database_sync_to_async(rows_fragment)(self.house_id, event)
        if html.strip():
            await self.send(text_data=html)

    async def access_revoked(self, event):
        if self.reader is not None and ends(event, self.reader):
            await self.stop_following()
            await self.close(code=event["code"])

    async def stop_following(self) -> None:
        self.reader = None
        await self.unfollow_yours()
        if self.house_id is not None:
            await self.channel_layer.group_discard(f"house-{self.house_id}", self.channel_name)
            self.house_id = None

    async def disconnect(self, code):
        await stop_waiting(self.session_end)
        await self.stop_following()
        if self.grouped:
            await self.channel_layer.group_discard(user_group(self.user.pk), self.channel_name)
