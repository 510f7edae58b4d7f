"""Proxies to the stream server: the members' read proxy and the sandbox writers' proxy.

Both inject the service secret upstream (it never reaches the caller), pass
offsets through untouched, and are async end to end: a waiting long-poll
holds no worker thread. A person's long-poll or SSE read ends when their right to
read does (``threads.read_watch``). The writers' proxy validates each entry against
the who-may-write-what table and fires the same hooks as server appends.
"""

import dataclasses
import time

import msgspec
from asgiref.sync import sync_to_async
from django.http import StreamingHttpResponse
from django.views.decorators.http import require_http_methods

from arbe_lib.api import (
    BadInput,
    Conflict,
    api_view,
    decode_body,
    json_response,
    request_body,
)
from arbe_lib.ids import time_ordered_id
from arbe_lib.per_loop import per_loop
from attachments.service import claim
from houses.access import access_stream, access_thread
from streams import wire
from streams.client import AsyncDurableStreamClient, async_service_client
from streams.errors import ProducerSeqGap, ProducerStale
from threads.entries import (
    AnyPayload,
    Chat,
    Entry,
    EntryError,
    Id,
    encode_entry,
    first_of_each_id,
    to_builtins,
)
from threads.models import EntryLocation
from threads.permissions import WriteRefused, check_write
from threads.posting import SERVER_ID, IdTaken
from threads.read_watch import reader_of, session_of, unless_ended, until_ended, watch_for
from threads.reading import find_entry, read_entries
from threads.recency import after_append

PASSED_HEADERS = (
    "Content-Type",
    "Stream-Next-Offset",
    "Stream-Up-To-Date",
    "Stream-Cursor",
    "Stream-Closed",
    "ETag",
    "Stream-SSE-Data-Encoding",
)
LIVE_MODES = {"long-poll", "sse"}
MAX_BATCH = 500

_clients = per_loop(async_service_client)


def _upstream() -> AsyncDurableStreamClient:
    """One pooled upstream client per event loop (httpx clients are loop-bound); private:
    the raw client never leaves this module (tests/unit/test_architecture.py)."""
    return _clients()


class UpstreamError(Exception):
    """The stream server failed in a way the caller can't fix (502)."""


def live_mode(request) -> str | None:
    live = request.GET.get("live") or None
    if live is not None and live not in LIVE_MODES:
        raise BadInput("live: must be 'long-poll' or 'sse'")
    return live


async def watched_read(request, resolve):
    """A read of the stream ``resolve()`` grants (an access check, awaited after the watch
    is open), watched for the end of the right to read when it is a person's live read."""
    watch = await watch_for(request, live_mode(request))
    try:
        access = await resolve()
        if watch is not None:
            watch.follow(
                reader_of(request, access.thread.house_id, access.thread.pk), session_of(request)
            )
        response = await proxy_read(request, access.thread.stream_name, watch)
    except BaseException:
        if watch is not None:
            await watch.close()
        raise
    if watch is not None and not isinstance(response, StreamingHttpResponse):
        await watch.close()
    return response


async def proxy_read(request, stream_name: str, watch=None):
    """Pass a read through; with ``watch``, it ends when the reader's right does (and the
    streamed body then closes ``watch``)."""
    live = live_mode(request)
    offset = request.GET.get("offset", wire.START)
    call = wire.read_call(stream_name, offset, live=live, cursor=request.GET.get("cursor"))
    # The body is passed through as it comes, so it must come as it is: a server that
    # compresses (the reference server gzips) would otherwise hand the caller gzip bytes
    # under no Content-Encoding.
    call = dataclasses.replace(call, headers=(*call.headers, ("Accept-Encoding", "identity")))
    response = await unless_ended(watch, _upstream().send(call, stream=True))
    if response.status_code >= 400:
        text = (await response.aread()).decode(errors="replace")[:300]
        await response.aclose()
        if response.status_code == 400:
            raise BadInput(f"offset: {text or 'malformed'}")
        if response.status_code in (404, 410):
            return json_response({"error": "This thread has no stream."}, status=404)
        return json_response({"error": "The stream server failed."}, status=502)
    headers = {h: response.headers[h] for h in PASSED_HEADERS if h in response.headers}
    headers["Cache-Control"] = "private, no-store"

    async def body():
        chunks = response.aiter_raw()
        try:
            async for chunk in chunks if watch is None else until_ended(watch, chunks):
                yield chunk
        finally:
            await response.aclose()
            if watch is not None:
                await watch.close()

    return StreamingHttpResponse(body(), status=response.status_code, headers=headers)


@api_view
@require_http_methods(["GET"])
async def thread_stream(request, thread_id):
    """``GET /api/threads/:id/stream``: members read the thread's stream."""
    return await watched_read(
        request, lambda: sync_to_async(access_thread)(request.principal, thread_id)
    )


class SandboxEntry(msgspec.Struct, forbid_unknown_fields=True):
    payload: AnyPayload
    id: Id | None = None
    authorId: Id | None = None


def decode_sandbox_body(body: bytes) -> list[SandboxEntry]:
    """One entry or a non-empty array of them; every way the JSON can be bad is a 400."""
    kind = list[SandboxEntry] if body.lstrip()[:1] == b"[" else SandboxEntry
    items = decode_body(body, kind, EntryError)
    items = items if isinstance(items, list) else [items]
    if not items:
        raise EntryError("An empty array appends nothing - at `$`")
    if len(items) > MAX_BATCH:
        raise EntryError(f"At most {MAX_BATCH} entries in one append - at `$`")
    return items


@api_view
@require_http_methods(["GET", "POST"])
async def sandbox_stream(request, name):
    """``/api/stream/:name``: sandbox writers append what their token allows; and read."""
    if request.method == "GET":
        return await watched_read(
            request, lambda: sync_to_async(access_stream)(request.principal, name)
        )
    access = await sync_to_async(access_stream)(request.principal, name)
    items = decode_sandbox_body(request_body(request))
    chosen = {item.id for item in items if item.id is not None}
    entries = stamp(items, access.principal.agent_id)
    # The whole batch is checked before anything is appended: all of it lands or none.
    writer = access.principal.writer()
    for entry in entries:
        check_write(writer, entry)
    check_chosen_ids(entries, chosen)
    if earlier := await sync_to_async(retried)(access, entries, chosen):
        body = {"entries": [to_builtins(e) for e in earlier], "offset": None, "duplicate": True}
        return json_response(body)
    entries = await sync_to_async(with_files)(access, entries)
    bodies = [encode_entry(e) for e in entries]
    client = _upstream()
    producer = fenced_producer(request, access.principal.claims)
    try:
        if len(bodies) == 1:
            result = await client.append(name, bodies[0], producer=producer)
        else:
            result = await client.append_batch(name, bodies, producer=producer)
    except ProducerStale:
        raise WriteRefused("This run's thread was taken over; its writes are refused.") from None
    except ProducerSeqGap as exc:
        raise Conflict(f"Producer-Seq: out of order ({exc})") from None
    if result.duplicate:  # the same Producer-Seq again: it landed the first time
        return json_response({"entries": [], "offset": None, "duplicate": True})
    await sync_to_async(after_append)(name, entries, result.next_offset)
    return json_response(
        {"entries": [to_builtins(e) for e in entries], "offset": result.next_offset}
    )


def fenced_producer(request, claims) -> tuple[str, int, int] | None:
    """A token minted at a lease epoch writes as the producer ``sandbox:<run>`` at that
    epoch, with the caller's ``Producer-Seq`` (one per append, from 0, in order): the
    store refuses it once a takeover has written at a newer epoch (``dispatch.takeover``)."""
    if claims is None or claims.epoch is None:
        return None
    seq = request.headers.get("Producer-Seq", "")
    if not seq.isdigit() or int(seq) > 2**53 - 1:
        raise BadInput("Producer-Seq: this token writes with a sequence number (0, 1, …)")
    return sandbox_producer(claims.run or claims.dispatch or claims.sub), claims.epoch, int(seq)


def sandbox_producer(run_id: str) -> str:
    return f"sandbox:{run_id}"


def stamp(items: list[SandboxEntry], agent_id: str | None) -> list[Entry]:
    """Entries as the server stamps them: its time, a fresh id unless one was sent."""
    now = time.time_ns() // 1_000_000
    entries = [
        Entry(
            id=item.id or time_ordered_id(),
            ts=now,
            payload=item.payload,
            authorId=item.authorId if item.authorId is not None else agent_id,
        )
        for item in items
    ]
    if len({e.id for e in entries}) != len(entries):
        raise EntryError("Each entry of a batch needs its own id - at `$[*].id`")
    return entries


def with_files(access, entries: list[Entry]) -> list[Entry]:
    """Chats as the server knows their files: the writer's own uploads in this thread,
    linked to the entry (404 for any other id), as a person's post (``threads.posting``)."""
    linked = []
    for e in entries:
        if isinstance(e.payload, Chat) and e.payload.attachments:
            refs = claim(access, [a.id for a in e.payload.attachments], e.id)
            e = msgspec.structs.replace(
                e, payload=msgspec.structs.replace(e.payload, attachments=refs)
            )
        linked.append(e)
    return linked


def retried(access, entries: list[Entry], chosen: set[str]) -> list[Entry] | None:
    """An id the writer chose that is already in the thread, whatever its kind: the same
    author's retry answers with what is there and appends nothing; anyone else's reuse of
    the id is a conflict (an id belongs to its first author).

    Chat ids are found in the chat index; any other id in the log, read once, and only for
    a writer that chose its ids (ids the proxy stamps are fresh).
    """
    sent = {e.id: e for e in entries if e.id in chosen}
    if not sent:
        return None
    authors = {
        loc.entry_id: loc.author_id
        for loc in EntryLocation.objects.filter(thread=access.thread, entry_id__in=list(sent))
    }
    there: dict[str, Entry] = {}
    if len(authors) < len(sent):
        for entry in first_of_each_id(read_entries(access.thread.stream_name)[0]):
            if entry.id in sent:
                there[entry.id] = entry
                authors.setdefault(entry.id, entry.authorId or "")
    if not authors:
        return None
    for entry_id, author in authors.items():
        if author != (sent[entry_id].authorId or ""):
            raise IdTaken(f"id: {entry_id!r} is already used by another author in this thread")
    if len(authors) != len(entries):
        raise IdTaken("id: some of these entries are already in the thread and some are not")
    return [
        found
        for e in entries
        if (found := there.get(e.id) or _found(access.thread.stream_name, e.id)) is not None
    ]


def check_chosen_ids(entries: list[Entry], chosen: set[str]) -> None:
    """A new entry of any kind but chat takes a chosen id only of the server's shape
    (``threads.posting.SERVER_ID``), which a person's post may not choose: chat ids are in
    the chat index, so no post lands under the id of another kind of entry, and a post
    needs no read of the log to know it."""
    for entry in entries:
        named = entry.id in chosen and not isinstance(entry.payload, Chat)
        if named and not SERVER_ID.match(entry.id):
            raise EntryError(
                "An entry other than chat takes no id or one of 24 hex digits (the shape "
                "of the server's ids) - at `$.id`"
            )


def _found(stream_name: str, entry_id: str) -> Entry | None:
    found = find_entry(stream_name, entry_id)
    return found[0] if found else None
