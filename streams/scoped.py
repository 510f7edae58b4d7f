"""The scoped client: one thread, through the app's proxy routes, never the service secret.

    GET  {base}/api/threads/{id}/stream?offset=…&live=long-poll&cursor=…
    POST {base}/api/threads/{id}/entries      {"id"?: str, "payload": {...}}

Callers (the CLI, scripts, any Python caller) authenticate with an API token
(``Authorization: Bearer arbe_…``) or a session cookie. The client builds the
scope URLs, appends entries, tails from a caller's offset keeping the offset
after each page, retries transient failures and raises at once on 401/403/404.

Stopping: cancel the task running the async ``tail``; set the ``threading.Event``
given to the sync ``tail`` (its waits run on a private loop, so the event ends
even a pending long-poll within a few milliseconds).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import msgspec

from streams import errors, wire
from streams.transport import CANCEL, Cancelled, SyncBridgeTransport

TOKEN_PREFIX = "arbe_"


@dataclass(frozen=True, slots=True)
class Page:
    """One answer of the stream route: its entries and where the next read starts."""

    entries: list[dict[str, Any]]
    next_offset: str
    up_to_date: bool
    closed: bool
    cursor: str | None


@dataclass(frozen=True, slots=True)
class PostedEntry:
    """The appended entry as the server stored it, and the stream offset after it."""

    entry: dict[str, Any]
    offset: str


_entries = msgspec.json.Decoder(list[dict[str, Any]])
_posted = msgspec.json.Decoder(dict[str, Any])


class _ScopedBase:
    def __init__(
        self,
        base_url: str,
        thread_id: str,
        *,
        token: str | None = None,
        cookies: dict[str, str] | None = None,
        csrf_token: str | None = None,
        backoff: wire.Backoff | None = None,
        timeout: float = 10.0,
        long_poll_timeout: float = 30.0,
    ):
        if token is not None and not token.startswith(TOKEN_PREFIX):
            # Only user API tokens belong here; the service secret never does.
            raise ValueError(f"an API token starts with {TOKEN_PREFIX!r}")
        self.base_url = base_url.rstrip("/")
        self.thread_id = thread_id
        self.offset: str | None = None
        self.backoff = backoff or wire.Backoff(attempts=8, base=0.2, cap=10.0)
        self._headers = {"accept": "application/json"}
        if token:
            self._headers["authorization"] = f"Bearer {token}"
        if csrf_token:
            self._headers["x-csrftoken"] = csrf_token
        self._cookies = cookies
        self._timeout = httpx.Timeout(timeout)
        self._live_timeout = httpx.Timeout(timeout, read=long_poll_timeout + timeout)

    def _client_options(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "headers": self._headers,
            "cookies": self._cookies,
            "timeout": self._timeout,
        }

    @property
    def stream_path(self) -> str:
        return f"/api/threads/{quote(self.thread_id, safe='')}/stream"

    @property
    def entries_path(self) -> str:
        return f"/api/threads/{quote(self.thread_id, safe='')}/entries"

    def _read_request(self, http, offset: str, cursor: str | None, live: bool, extensions=None):
        params = wire.read_params(offset, live="long-poll" if live else None, cursor=cursor)
        return http.build_request(
            "GET",
            self.stream_path,
            params=params,
            timeout=self._live_timeout if live else self._timeout,
            extensions=extensions,
        )

    def _catch_up_request(self) -> httpx.Request:
        return self._read_request(self.http, self.offset, None, False)

    def _post_request(self, http, payload: dict[str, Any], entry_id: str | None):
        body: dict[str, Any] = {"payload": payload}
        if entry_id is not None:
            body["id"] = entry_id
        return http.build_request(
            "POST",
            self.entries_path,
            content=msgspec.json.encode(body),
            headers={"content-type": "application/json"},
        )

    @staticmethod
    def _decode_page(response: httpx.Response, offset: str) -> Page:
        wire.raise_for_status(response)
        headers = response.headers
        data = response.content if response.status_code == 200 else b""
        return Page(
            entries=_entries.decode(data) if data.strip() else [],
            next_offset=headers.get(errors.STREAM_NEXT_OFFSET, offset),
            up_to_date=headers.get(wire.STREAM_UP_TO_DATE, "").lower() == "true",
            closed=headers.get(errors.STREAM_CLOSED, "").lower() == "true",
            cursor=headers.get(wire.STREAM_CURSOR),
        )

    @staticmethod
    def _decode_posted(response: httpx.Response) -> PostedEntry:
        wire.raise_for_status(response)
        body = _posted.decode(response.content)
        return PostedEntry(entry=body.get("entry", body), offset=body["offset"])

    def _retry_delay(self, attempt: int, exc: errors.StreamError, *, resend: bool = True):
        """Seconds before trying again, or re-raise: auth and client errors are final."""
        if not (exc.transient and resend) or attempt + 1 >= self.backoff.attempts:
            raise exc
        return self.backoff.delay(attempt, exc)

    @staticmethod
    def _transport_error(exc: httpx.TransportError) -> errors.TransportError:
        return errors.TransportError(repr(exc))

    @staticmethod
    def _unsent(exc: errors.StreamError) -> bool:
        """The request never reached the server, so even a non-idempotent one may go again."""
        return isinstance(exc.__cause__, httpx.ConnectError | httpx.ConnectTimeout)

    @staticmethod
    def chat(text: str) -> dict[str, Any]:
        return {"type": "chat", "text": text}


class ScopedStreamClient(_ScopedBase):
    """Blocking scoped client; its requests run on a private loop so a tail can be cancelled."""

    def __init__(self, base_url: str, thread_id: str, *, transport=None, **kwargs):
        super().__init__(base_url, thread_id, **kwargs)
        transport = transport or SyncBridgeTransport(httpx.AsyncHTTPTransport())
        self.http = httpx.Client(transport=transport, **self._client_options())

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> ScopedStreamClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _send(self, request: httpx.Request) -> httpx.Response:
        try:
            return self.http.send(request)
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from exc

    def append(self, payload: dict[str, Any], entry_id: str | None = None) -> PostedEntry:
        """Append an entry; retried on transient failures only when safe (an id, or unsent)."""
        attempt = 0
        while True:
            try:
                return self._decode_posted(
                    self._send(self._post_request(self.http, payload, entry_id))
                )
            except errors.StreamError as exc:
                resend = entry_id is not None or self._unsent(exc)
                time.sleep(self._retry_delay(attempt, exc, resend=resend))
                attempt += 1

    def post_chat(self, text: str, entry_id: str | None = None) -> PostedEntry:
        return self.append(self.chat(text), entry_id)

    def read(self, offset: str = wire.START) -> Page:
        """One catch-up page from ``offset`` (no waiting)."""
        return self._decode_page(
            self._send(self._read_request(self.http, offset, None, False)), offset
        )

    def poll(self, offset: str, cancel: threading.Event | None = None) -> Page | None:
        """One long-poll page from ``offset``: what arrived, or an empty page when the server's
        wait ran out; None once ``cancel`` is set. Transient failures are retried."""
        cancel = cancel or threading.Event()
        attempt = 0
        while not cancel.is_set():
            request = self._read_request(self.http, offset, None, True, {CANCEL: cancel})
            try:
                return self._decode_page(self._send(request), offset)
            except Cancelled:
                return None
            except errors.StreamError as exc:
                if cancel.wait(self._retry_delay(attempt, exc)):
                    return None
                attempt += 1
        return None

    def tail(
        self, from_offset: str | None = None, cancel: threading.Event | None = None
    ) -> Iterator[dict[str, Any]]:
        """Yield entries from ``from_offset`` (default: ``self.offset`` or the start) until the
        stream closes or ``cancel`` is set; ``self.offset`` is the offset after each page."""
        self.offset = from_offset or self.offset or wire.START
        cancel = cancel or threading.Event()
        extensions = {CANCEL: cancel}
        cursor, attempt = None, 0
        while not cancel.is_set():
            request = self._read_request(self.http, self.offset, cursor, True, extensions)
            try:
                page = self._decode_page(self._send(request), self.offset)
                if page.closed and not page.entries:  # see wire.confirm_eof
                    page = self._decode_page(self._send(self._catch_up_request()), self.offset)
            except Cancelled:
                return
            except errors.StreamError as exc:
                if cancel.wait(self._retry_delay(attempt, exc)):
                    return
                attempt += 1
                continue
            attempt, cursor = 0, page.cursor or cursor
            yield from page.entries
            self.offset = page.next_offset
            if page.closed:
                return


class AsyncScopedStreamClient(_ScopedBase):
    """Async scoped client; cancelling the task that runs ``tail`` stops it at once."""

    def __init__(self, base_url: str, thread_id: str, *, transport=None, **kwargs):
        super().__init__(base_url, thread_id, **kwargs)
        self.http = httpx.AsyncClient(transport=transport, **self._client_options())

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncScopedStreamClient:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()

    async def _send(self, request: httpx.Request) -> httpx.Response:
        try:
            return await self.http.send(request)
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from exc

    async def append(self, payload: dict[str, Any], entry_id: str | None = None) -> PostedEntry:
        attempt = 0
        while True:
            request = self._post_request(self.http, payload, entry_id)
            try:
                return self._decode_posted(await self._send(request))
            except errors.StreamError as exc:
                resend = entry_id is not None or self._unsent(exc)
                await asyncio.sleep(self._retry_delay(attempt, exc, resend=resend))
                attempt += 1

    async def post_chat(self, text: str, entry_id: str | None = None) -> PostedEntry:
        return await self.append(self.chat(text), entry_id)

    async def read(self, offset: str = wire.START) -> Page:
        request = self._read_request(self.http, offset, None, False)
        return self._decode_page(await self._send(request), offset)

    async def tail(self, from_offset: str | None = None) -> AsyncIterator[dict[str, Any]]:
        self.offset = from_offset or self.offset or wire.START
        cursor, attempt = None, 0
        while True:
            request = self._read_request(self.http, self.offset, cursor, True)
            try:
                page = self._decode_page(await self._send(request), self.offset)
                if page.closed and not page.entries:  # see wire.confirm_eof
                    request = self._catch_up_request()
                    page = self._decode_page(await self._send(request), self.offset)
            except errors.StreamError as exc:
                await asyncio.sleep(self._retry_delay(attempt, exc))
                attempt += 1
                continue
            attempt, cursor = 0, page.cursor or cursor
            for entry in page.entries:
                yield entry
            self.offset = page.next_offset
            if page.closed:
                return
