"""The channel layers: Redis with a connection pool that waits instead of failing, and the
one-process layer without its walk of every channel on each message (below).

channels_redis builds each event loop's pool with redis-py's ``ConnectionPool``, which since
redis-py 6 holds at most 100 connections and raises ``MaxConnectionsError`` on the 101st
concurrent command. A thousand sockets opening or closing at once (a deploy, a network blip)
each join or leave their groups together, and the ones past 100 failed. Here the pool is a
``BlockingConnectionPool``: past its size a command waits for a free connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from copy import deepcopy

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer
from channels_redis.core import RedisChannelLayer
from redis.asyncio import BlockingConnectionPool

POOL_SIZE = 100  # connections to Redis per process and event loop
POOL_WAIT_S = 15  # as long as a read may take (settings: ``socket_timeout``)


class WaitingRedisChannelLayer(RedisChannelLayer):
    def create_pool(self, index):
        host = dict(self.hosts[index])
        address = host.pop("address")
        host.setdefault("max_connections", POOL_SIZE)
        host.setdefault("timeout", POOL_WAIT_S)
        return BlockingConnectionPool.from_url(address, **host)


class ProcessChannelLayer(InMemoryChannelLayer):
    """The one-process channel layer (``make run``, SQLite), cleaning expired messages and
    group memberships at most once every ``CLEAN_S``.

    Channels' in-memory layer walks every channel and every group on each send and receive
    to drop what expired. A group send to a thousand sockets (a thread's row moving, a read)
    is a thousand sends, so it walked a thousand channels a thousand times: seconds of the
    event loop per post, while every socket's frame and the next request waited. Expiry
    here is a minute (a message nobody received, a membership never renewed); enforcing it
    up to a second late changes nothing a socket sees.

    A group send puts the message on each member's queue in one pass (Channels makes a task
    per member and awaits them all), and a channel keeps its queue while its consumer reads
    from it (Channels drops an emptied queue after every message and makes a new one for
    the next): per socket and message, one copy and one put.
    """

    CLEAN_S = 1.0
    _cleaned = 0.0

    def _queue(self, channel: str) -> asyncio.Queue:
        queue = self.channels.get(channel)
        if queue is None:
            queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
        return queue

    def _put(self, channel: str, message: dict) -> None:
        try:
            self._queue(channel).put_nowait((time.time() + self.expiry, deepcopy(message)))
        except asyncio.QueueFull:
            raise ChannelFull(channel) from None

    async def send(self, channel, message):
        assert isinstance(message, dict), "message is not a dict"
        assert "__asgi_channel__" not in message
        self.require_valid_channel_name(channel)
        self._put(channel, message)

    async def group_send(self, group, message):
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            with contextlib.suppress(ChannelFull):  # as Channels: a member this far behind
                self._put(channel, message)

    async def receive(self, channel):
        self.require_valid_channel_name(channel)
        self._clean_expired()
        queue = self._queue(channel)
        try:
            _, message = await queue.get()
        except BaseException:  # the reader is gone (cancelled): its empty queue goes too
            if queue.empty() and self.channels.get(channel) is queue:
                del self.channels[channel]
            raise
        return message

    def _clean_expired(self):
        now = time.monotonic()
        if now - self._cleaned >= self.CLEAN_S:
            self._cleaned = now
            super()._clean_expired()
