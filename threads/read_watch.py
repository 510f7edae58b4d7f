"""A person's live read through the stream proxy ends with their right to read.

A long-poll or SSE read by a person opens a ``houses.revocation.Watch`` before its
access check; the proxy then waits for upstream *or* the watch. Ended while waiting
for upstream's answer, the read gets the answer a fresh request would get (401 signed
out, 404 no longer a member); ended mid-stream, the body stops between chunks and the
upstream response is closed. Sandbox (bot) and catch-up reads are not watched: a
catch-up ends by itself and a sandbox token carries its own expiry.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable

from django.http import Http404

from arbe_lib.api import NotAuthenticated
from houses.revocation import NO_ACCESS, Reader, Watch


async def watch_for(request, live: str | None) -> Watch | None:
    """A watch for a person's live read (joined before access is checked), else None."""
    principal = request.principal
    if live is None or principal is None or not principal.is_person:
        return None
    return await Watch.open(principal.user.pk)


def reader_of(request, house_id: int, thread_id: str) -> Reader:
    principal = request.principal
    if principal.token_id is not None:
        return Reader(house=house_id, token=principal.token_id, thread=thread_id)
    return Reader.of_session(getattr(request, "session", None), house_id, thread_id)


def session_of(request):
    """The session a cookie read was opened with (its expiry ends the read); None for a
    token's read, which ends with the token."""
    if request.principal.token_id is not None:
        return None
    return getattr(request, "session", None)


def refusal(watch: Watch) -> Exception:
    """What a new request would be answered, now that the right has ended."""
    if watch.code == NO_ACCESS:
        return Http404()
    return NotAuthenticated("Signed out: sign in again or send a valid API token.")


async def unless_ended(watch: Watch | None, waiting: Awaitable):
    """``waiting``'s result, or the refusal if the right ends first (``waiting`` is
    cancelled)."""
    if watch is None:
        return await waiting
    if watch.ended.is_set():
        raise refusal(watch)
    task = asyncio.ensure_future(waiting)
    stop = asyncio.ensure_future(watch.ended.wait())
    try:
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise refusal(watch)
    return task.result()


async def until_ended(watch: Watch, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``chunks`` until they end or the right to read does, whichever is first."""
    stop = asyncio.ensure_future(watch.ended.wait())
    step = None
    try:
        while not watch.ended.is_set():
            step = asyncio.ensure_future(anext(chunks))
            await asyncio.wait({step, stop}, return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                return
            try:
                chunk = step.result()
            except StopAsyncIteration:
                return
            step = None
            yield chunk
    finally:
        stop.cancel()
        if step is not None and not step.done():  # ended, or the caller went away
            step.cancel()
            with contextlib.suppress(BaseException):
                await step
