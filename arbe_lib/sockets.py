"""What every page socket's consumer shares: a dispatch without a database trip per message.

Channels (4.2+) runs ``close_old_connections`` on its one database thread before every
message a consumer handles, socket frames and channel-layer events alike. A group event to
a thousand sockets (a thread's row moving, a read) was then a thousand trips to that one
thread, one after the other, and every request of the process waited behind them. The
page consumers reach the database only through ``database_sync_to_async``, which closes
stale connections itself around each call; the trip per message is dropped here.
"""

from __future__ import annotations

from channels.consumer import get_handler_name


class QuickDispatch:
    """Mixed in before Channels' consumer class."""

    async def dispatch(self, message):
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)
