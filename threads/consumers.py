"""The thread page's socket: catch up from the page's offset, then follow the tail hub.

Frames are htmx out-of-band fragments made from the page's own templates. Each
frame ends with the offset it brings the page to; the page script reconnects
from the last one it applied, so a dropped socket resumes with no gap and no
duplicate. Access goes through ``houses.access``: a non-member is closed with
4404 (accepted first, so the browser sees the code and doesn't retry). The socket
joins ``user-<id>`` before that check and closes when ``houses.revocation`` says its
right ended: 4404 removed from the house, 4401 signed out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.http import Http404

from arbe_lib.sockets import QuickDispatch
from houses.access import access_person_thread
from houses.membership import agent_for_user
from houses.principals import person
from houses.renaming import names_group
from houses.revocation import Reader, ends, socket_session_end, stop_waiting, user_group
from houses.yours_socket import YoursFollower
from streams import errors
from threads import presence, watching
from threads.fragments import entry_fragments, offset_marker
from threads.render_pool import off_loop
from threads.socket_frames import writer_for
from threads.tail_hub import hub
from threads.unreadable import readable

logger = logging.getLogger(__name__)
NOT_A_MEMBER = 4404
BAD_OFFSET = 4400
TRY_AGAIN = 1013  # the ws extension reconnects on it
CATCH_UP_FRAME_CHARS = 200_000  # ≤ 1 MiB in UTF-8 whatever the text
READ_REFRESH_S = 30  # at most one read mark per open page per this many seconds


@database_sync_to_async
def thread_access(user, thread_id: str):
    if not user.is_authenticated:
        return None
    try:
        return access_person_thread(person(user, agent_for_user(user)), thread_id)
    except Http404:
        return None


def catch_up_frames(result, name: str, names, thread_id: str) -> tuple[list[str], str, set[str]]:
    """The catch-up read as frames (the panel and the offset marker go after the last), the
    marker, and the ids of its entries. On a render thread.

    Daphne refuses a frame over 1 MiB (and closes the socket with 1011, which the page
    would retry from the same offset for ever): a long catch-up goes in several frames,
    the offset only with the last one, so a drop in between resumes from the old one.
    """
    entries = readable(result.messages or (), name)
    frames, body = [], ""
    for _, html in entry_fragments(entries, names, thread_id):
        if body and len(body) + len(html) > CATCH_UP_FRAME_CHARS:
            frames.append(body)
            body = ""
        body += html
    frames.append(body)
    return frames, offset_marker(result.next_offset), {e.id for e in entries}


@database_sync_to_async
def presence_of(agent_id: str) -> tuple[str, str, dict]:
    from houses.models import Agent
    from threads.entry_views import avatar
    from threads.narration import Name

    agent = Agent.objects.get(pk=agent_id)
    name = Name(agent.display_name, agent.handle, False, True)
    return agent_id, agent.display_name, avatar(agent_id, name)


class ThreadConsumer(QuickDispatch, YoursFollower, AsyncWebsocketConsumer):
    subscription = None
    pump = None
    direct = False  # the hub writes frames straight to this socket (threads.socket_frames)
    read_at = 0.0
    reader = None
    grouped = False
    session_end = None  # the task that ends the read when its session expires
    relayed_house = True  # its sidebar drops its own thread's rows: filtered once per process

    async def connect(self):
        self.user = self.scope["user"]
        self.thread_id = self.scope["url_route"]["kwargs"]["thread_id"]
        if self.user.is_authenticated:  # joined before the check: no revocation falls between
            await self.channel_layer.group_add(user_group(self.user.pk), self.channel_name)
            self.grouped = True
        access = await thread_access(self.user, self.thread_id)
        await self.accept()
        if access is None:
            await self.close(code=NOT_A_MEMBER)
            return
        self.house_id = access.thread.house_id
        self.reader = Reader.of_session(self.scope.get("session"), self.house_id, self.thread_id)
        self.session_end = socket_session_end(self)
        await self.channel_layer.group_add(names_group(self.house_id), self.channel_name)
        await self.join_presence(access.principal.agent_id)
        await watching.opened(self.user.pk, self.thread_id)
        self.read_at = time.monotonic()  # opening marked the thread read
        self.subscription = await hub().subscribe(self.thread_id)
        # The sidebar, the bell and notices ride this socket (houses.yours_socket).
        await self.follow_yours(house_id=self.house_id, current=self.thread_id, side=True)
        try:
            seen = await self.catch_up(self.requested_offset())
        except errors.StreamError:
            await self.close(code=BAD_OFFSET)
            return
        self.pump = asyncio.create_task(self.follow(seen))

    def requested_offset(self) -> str | None:
        from urllib.parse import parse_qs

        values = parse_qs(self.scope.get("query_string", b"").decode()).get("offset")
        return values[0] if values and values[0] else None

    async def catch_up(self, offset: str | None) -> set[str]:
        """Send what the page misses since ``offset``; returns the ids sent (for de-duplication).

        The hub was subscribed first, so anything appended after this read also arrives
        through it: entries in both are dropped there by id.
        """
        tail = self.subscription.tail
        if offset is None:
            await self.send(text_data=tail.panel + tail.marker)
            return set()
        name = f"arbe-thread-{self.thread_id}"
        result = await hub().reader.catch_up(name, offset)
        # Decoding and rendering run on a render thread, never on the event loop.
        frames, marker, ids = await off_loop(
            catch_up_frames, result, name, tail.names, self.thread_id
        )
        for text in frames[:-1]:
            await self.send(text_data=text)
        await self.send(text_data=frames[-1] + tail.panel + marker)
        return ids

    async def follow(self, seen: set[str]) -> None:
        queue = self.subscription.queue
        while True:
            if not seen and not self.direct:
                self.direct = True  # asked once: a socket that can't be written to stays so
                self.subscription.write = self.writer()
            batch = await queue.get()
            if batch is None:
                await self.close(code=TRY_AGAIN)
                return
            if batch.parts and time.monotonic() - self.read_at > READ_REFRESH_S:
                # An open page reads what lands (docs/unread.md); this keeps it counted as
                # open. Beside the frames, not before them, and batched per process.
                self.read_at = time.monotonic()
                watching.refreshed(self.user.pk, self.thread_id)
            if not seen:
                await self.send(text_data=batch.frame)
                continue
            fresh = [i for i in batch.ids if i not in seen]
            if not fresh:  # already sent by the catch-up; the panel may still be newer
                await self.send(text_data=batch.panel)
                continue
            # Stream order: once an entry is new, the catch-up window is behind us.
            parts = "".join(html for i, html in batch.parts if i not in seen)
            seen = set()
            await self.send(text_data=parts + batch.panel + batch.marker)

    def writer(self):
        """Past the catch-up: the hub writes each batch's frame straight to this socket
        (``threads.socket_frames``), or None where that can't be done (not Daphne)."""
        write = writer_for(self.base_send)
        if write is None:
            return None

        def deliver(batch) -> bool:
            if not write(batch.wire):
                return False  # through the queue and the framework, as before
            if batch.parts and time.monotonic() - self.read_at > READ_REFRESH_S:
                self.read_at = time.monotonic()  # as ``follow`` does: still an open page
                watching.refreshed(self.user.pk, self.thread_id)
            return True

        return deliver

    async def access_revoked(self, event):
        """The right to read ended (``houses.revocation``): no frame after this one."""
        if self.reader is not None and ends(event, self.reader):
            self.reader = None
            await self.stop_following()
            await self.close(code=event["code"])
        elif (
            self.reader is not None and event.get("thread") and event.get("house") == self.house_id
        ):
            await self.send_yours({"type": "inbox.changed"})  # out of another: the sidebar redraws

    # -- the sidebar: house events and reads of this person (houses.yours_socket) --------

    async def thread_status(self, event):
        if event.get("thread") != self.thread_id:  # this thread's own row stays put
            await self.send_yours(event)

    thread_row = thread_status
    thread_read = thread_status

    async def board_rows(self, event):
        """Board rows: the board page's business."""

    async def names_changed(self, event):
        """Someone in the house took a new display name (``houses.renaming``): this
        socket's presence carries it. (The tail reads names with each batch it renders.)"""
        me = getattr(self, "me", None)
        if me is not None and me[0] == event["agent"]:  # only the renamed person's sockets
            self.me = await presence_of(me[0])

    async def stop_following(self) -> None:
        if self.subscription is not None:
            self.subscription.write = None  # no frame straight to the socket from here on
        await self.unfollow_yours()
        if self.pump is not None:
            self.pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.pump
            self.pump = None
        if self.subscription is not None:
            hub().unsubscribe(self.subscription)
            self.subscription = None

    # -- presence and typing (threads.presence): the channel layer only, never the log --

    async def join_presence(self, agent_id: str) -> None:
        self.me = await presence_of(agent_id)
        self.throttle = presence.Throttle()
        await self.channel_layer.group_add(presence.group(self.thread_id), self.channel_name)
        presence.joined(self.thread_id)
        await self.announce("joined")

    async def announce(self, state: str) -> None:
        if not presence.should_relay(self.thread_id, self.me[0], state):
            return
        event = presence.event(state, *self.me)
        try:
            await self.channel_layer.group_send(presence.group(self.thread_id), event)
        except Exception:  # noqa: BLE001 - presence is best effort; the page forgets it
            logger.warning("could not relay presence on thread %s", self.thread_id)

    async def receive(self, text_data=None, bytes_data=None):
        if getattr(self, "me", None) is None or self.reader is None:
            return
        state = presence.parse(text_data)
        every = presence.TYPING_EVERY_S if state == "typing" else presence.HERE_EVERY_S
        if state and self.throttle.allow(state, every):
            await self.announce(state)

    async def here_event(self, event):
        if self.reader is None:
            return
        # Someone opened the thread: tell them who is already here (throttled).
        joined = event["state"] == "joined" and event["agent"] != self.me[0]
        if joined and self.throttle.allow("answer", presence.ANSWER_EVERY_S):
            await self.announce("here")
        await self.send(text_data=presence.fragment(event))

    async def disconnect(self, code):
        await stop_waiting(self.session_end)
        if getattr(self, "me", None) is not None:
            await self.announce("left")
            await self.channel_layer.group_discard(
                presence.group(self.thread_id), self.channel_name
            )
            presence.left(self.thread_id)
            self.me = None
        await self.stop_following()
        if self.grouped:
            await self.channel_layer.group_discard(user_group(self.user.pk), self.channel_name)
        if getattr(self, "house_id", None) is not None:
            await self.channel_layer.group_discard(names_group(self.house_id), self.channel_name)
            watching.closed(self.user.pk, self.thread_id)
