"""The Redis channel layer, with a connection pool that waits instead of failing.

channels_redis builds each event loop's pool with redis-py's ``ConnectionPool``, which since
redis-py 6 holds at most 100 connections and raises ``MaxConnectionsError`` on the 101st
concurrent command. A thousand sockets opening or closing at once (a deploy, a network blip)
each join or leave their groups together, and the ones past 100 failed. Here the pool is a
``BlockingConnectionPool``: past its size a command waits for a free connection.
"""

from __future__ import annotations

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
