"""One membership of a group per process, offering each event to this process's sockets.

A house's group reaches every live page of the house. Each thread page's socket follows it
for its sidebar, and drops what concerns its own thread (its row stays put). As a member of
the group through the channel layer, every socket paid for every event: a post's two status
events to a thread with a thousand viewers were two thousand messages, each a queue, a task
and a dispatch on the event loop (on Redis, a thousand messages through the server), all
ahead of the post's fragment, to be dropped by each socket.

Here the process joins the group once, with a channel of its own, and offers each event to
its sockets with one plain call (``wants``); only the sockets that want it are sent it, on
their own channel, so they handle it in order with everything else they receive.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer

from arbe_lib.per_loop import per_loop

logger = logging.getLogger(__name__)

RENEW_S = 3600.0  # group memberships expire (a day by default): the relay's is renewed


class Follower(Protocol):
    channel_name: str

    def wants(self, event: dict) -> bool:
        """Cheap and synchronous: whether this socket has anything to do with ``event``."""


class Relay:
    """One group's membership in this process, and the sockets here that follow it."""

    def __init__(self, layer, group: str):
        self.layer, self.group = layer, group
        self.followers: dict[Follower, None] = {}  # in joining order
        self.joined: asyncio.Future = asyncio.get_running_loop().create_future()
        self.task = asyncio.create_task(self.run(), name=f"relay {group}")

    async def run(self) -> None:
        try:
            channel = await self.layer.new_channel()
            await self.layer.group_add(self.group, channel)
        except Exception as exc:
            self.joined.set_exception(exc)
            return
        self.joined.set_result(None)
        renew = asyncio.create_task(self.renew(channel))
        try:
            while True:
                event = await self.layer.receive(channel)
                await self.offer(event)
        finally:
            renew.cancel()
            with contextlib.suppress(Exception):
                await asyncio.shield(self.layer.group_discard(self.group, channel))

    async def renew(self, channel: str) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            with contextlib.suppress(Exception):
                await self.layer.group_add(self.group, channel)

    async def offer(self, event: dict) -> None:
        for follower in list(self.followers):
            try:
                wanted = follower.wants(event)
            except Exception:
                logger.exception("a socket could not judge a %s event", event.get("type"))
                continue
            if wanted and follower in self.followers:
                # As a group send: a socket this far behind misses it.
                with contextlib.suppress(ChannelFull):
                    await self.layer.send(follower.channel_name, event)


class Relays:
    """This process's relays (per event loop), one per group with followers here."""

    def __init__(self):
        self.relays: dict[str, Relay] = {}

    async def follow(self, group: str, follower: Follower) -> None:
        """From now on ``follower`` is offered the events sent to ``group``."""
        relay = self.relays.get(group)
        if relay is None:
            relay = self.relays[group] = Relay(get_channel_layer(), group)
        relay.followers[follower] = None
        try:
            await asyncio.shield(relay.joined)
        except BaseException:
            self.leave(group, follower)
            raise

    def leave(self, group: str, follower: Follower) -> None:
        relay = self.relays.get(group)
        if relay is None:
            return
        relay.followers.pop(follower, None)
        if not relay.followers:
            del self.relays[group]
            relay.task.cancel()


relays = per_loop(Relays)
