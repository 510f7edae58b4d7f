"""Running Django's synchronous database work from asyncio code."""

from asgiref.sync import sync_to_async
from django.db import close_old_connections


async def in_thread(func, *args):
    """Call ``func(*args)`` in a worker thread, closing that thread's stale connections after.

    Not thread-sensitive: backstage work (director passes, board stores) must not queue
    behind each other on the one thread Django keeps for sync views.
    """

    def call():
        try:
            return func(*args)
        finally:
            close_old_connections()

    return await sync_to_async(call, thread_sensitive=False)()
