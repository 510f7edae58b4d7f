"""An asyncio Effect RPC client for T3 Code's ``/ws`` (orchestration protocol 2).

    client = await Client.connect("http://127.0.0.1:3773", token=token)
    subscription = await client.subscribe("orchestration.subscribeShell", {})
    async for event in subscription:
        if isinstance(event, StreamChunk):
            rows = apply(rows, event.values, host="workstation")
            await client.ack(subscription)      # exactly once per chunk, after folding it
    projection = await client.call("orchestration.getThreadProjection", {"threadId": tid})
    await client.close()

The server sends a stream's next chunk only after the Ack of the previous one. The
client pings every ``ping_interval`` seconds and gives the socket up after
``dead_after`` seconds without any frame. It never reconnects by itself: a lost
socket ends every subscription with ``StreamError(ConnectionLost)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx
import msgspec
import websockets
from websockets.asyncio.client import connect as ws_connect

from boards.t3 import frames

logger = logging.getLogger(__name__)
PROTOCOL_VERSION = "2"
TICKET_PATH = "/api/auth/websocket-ticket"


class RpcError(Exception):
    """Base of every error this client raises or reports."""


class ProtocolMismatch(RpcError):
    """HTTP 426: the server does not speak orchestration protocol 2."""


class AuthFailed(RpcError):
    """HTTP 401: no credential, or one the server refused."""


class ConnectionLost(RpcError):
    """The socket closed, failed, or went silent for longer than ``dead_after``."""


class DefectReceived(RpcError):
    """A connection-level ``Defect`` frame; it ends every request on the socket."""

    def __init__(self, defect: Any) -> None:
        super().__init__(f"defect: {defect!r}")
        self.defect = defect


class ExitFailure(RpcError):
    """An ``Exit`` Failure: its cause list of ``Fail`` (typed error), ``Die`` and ``Interrupt``."""

    def __init__(self, cause: list[frames.Cause]) -> None:
        self.cause = cause
        super().__init__("; ".join(_describe(part) for part in cause) or "failure")

    @property
    def errors(self) -> list[Any]:
        return [part.error for part in self.cause if isinstance(part, frames.Fail)]

    @property
    def defects(self) -> list[Any]:
        return [part.defect for part in self.cause if isinstance(part, frames.Die)]

    @property
    def interrupted(self) -> bool:
        return any(isinstance(part, frames.Interrupted) for part in self.cause)

    @property
    def error_tag(self) -> str | None:
        """The first typed error's ``_tag``, e.g. ``OrchestrationV2GetThreadProjectionError``."""
        for error in self.errors:
            if isinstance(error, dict) and isinstance(error.get("_tag"), str):
                return error["_tag"]
        return None


def _describe(part: frames.Cause) -> str:
    if isinstance(part, frames.Fail):
        return f"Fail {part.error!r}"
    if isinstance(part, frames.Die):
        return f"Die {part.defect!r}"
    return "Interrupt"


class StreamChunk(msgspec.Struct):
    values: list[Any]


class StreamError(msgspec.Struct):
    error: RpcError


class StreamDone(msgspec.Struct):
    value: Any = None


StreamEvent = StreamChunk | StreamError | StreamDone


class Subscription:
    """One stream request. Iterate it for chunk, then error or done."""

    def __init__(self, client: Client, request_id: str, tag: str) -> None:
        self.client, self.id, self.tag = client, request_id, tag
        self.events: asyncio.Queue[StreamEvent | None] = asyncio.Queue()
        self.unacked = 0
        self.finished = asyncio.Event()
        self.interrupted = False

    def __repr__(self) -> str:
        return f"<Subscription {self.id} {self.tag}>"

    def __aiter__(self):
        return self

    async def __anext__(self) -> StreamEvent:
        if self.finished.is_set() and self.events.empty():
            raise StopAsyncIteration
        event = await self.events.get()
        if event is None:  # ended by our own unsubscribe
            raise StopAsyncIteration
        if isinstance(event, StreamChunk):
            self.unacked += 1
        return event

    def _push(self, event: StreamEvent) -> None:
        if self.finished.is_set():
            return
        if isinstance(event, StreamError | StreamDone):
            self.finished.set()
            if self.interrupted:
                self.events.put_nowait(None)  # we asked for the end: nothing more to tell
                return
        self.events.put_nowait(event)


class Client:
    def __init__(self, socket, *, ping_interval: float, dead_after: float) -> None:
        self.socket = socket
        self.ping_interval, self.dead_after = ping_interval, dead_after
        self.ids = itertools.count(1)
        self.streams: dict[str, Subscription] = {}
        self.calls: dict[str, asyncio.Future] = {}
        self.last_heard = time.monotonic()
        self.closed: RpcError | None = None
        self.tasks = [
            asyncio.create_task(self._read(), name="t3-rpc-read"),
            asyncio.create_task(self._ping(), name="t3-rpc-ping"),
        ]

    def __repr__(self) -> str:
        return f"<t3 Client {len(self.streams)} streams{' closed' if self.closed else ''}>"

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        auth: str = "ticket",
        ping_interval: float = 10.0,
        dead_after: float = 30.0,
        open_timeout: float = 10.0,
    ) -> Client:
        """Open ``/ws`` on the server at ``url`` (its origin, or its ``/ws`` URL).

        With a token, ``auth="ticket"`` trades it for a one-time ``wsTicket`` first;
        ``auth="bearer"`` sends it as ``Authorization`` on the upgrade instead.
        """
        http_base, ws_url = _urls(url)
        query = {"orchestrationProtocol": PROTOCOL_VERSION}
        headers = {}
        if token and auth == "ticket":
            query["wsTicket"] = await _ticket(http_base, token, open_timeout)
        elif token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            socket = await ws_connect(
                f"{ws_url}?{urlencode(query)}",
                additional_headers=headers,
                open_timeout=open_timeout,
                ping_interval=None,  # liveness is the RPC Ping/Pong, as Effect clients do it
                max_size=64 * 1024 * 1024,
            )
        except websockets.InvalidStatus as exc:
            raise _refusal(exc.response.status_code, exc.response.body) from None
        except (OSError, TimeoutError, websockets.InvalidHandshake) as exc:
            raise ConnectionLost(f"could not open {ws_url}: {exc}") from exc
        return cls(socket, ping_interval=ping_interval, dead_after=dead_after)

    # -- requests ------------------------------------------------------------------------

    async def subscribe(self, tag: str, payload: Any) -> Subscription:
        subscription = Subscription(self, self._next_id(), tag)
        self.streams[subscription.id] = subscription
        await self._send(frames.Request(id=subscription.id, tag=tag, payload=payload))
        return subscription

    async def ack(self, subscription: Subscription) -> None:
        """Release the stream's next chunk; once per chunk received, after consuming it."""
        if subscription.unacked <= 0:
            raise RuntimeError(f"{subscription!r} has no chunk waiting for an ack")
        subscription.unacked -= 1
        if not subscription.finished.is_set():
            await self._send(frames.Ack(requestId=subscription.id))

    async def unsubscribe(self, subscription: Subscription, timeout: float = 5.0) -> None:
        """Interrupt the stream and wait (bounded) for the server to end it."""
        if subscription.finished.is_set():
            return
        subscription.interrupted = True
        with contextlib.suppress(RpcError):
            await self._send(frames.Interrupt(requestId=subscription.id))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(subscription.finished.wait(), timeout)
        if self.streams.pop(subscription.id, None) is not None:  # the server never answered
            subscription._push(StreamDone())

    async def call(self, tag: str, payload: Any, timeout: float | None = 30.0) -> Any:
        """A unary request: its ``Exit`` Success value, or raise ``ExitFailure``."""
        request_id = self._next_id()
        future = asyncio.get_running_loop().create_future()
        self.calls[request_id] = future
        try:
            await self._send(frames.Request(id=request_id, tag=tag, payload=payload))
            return await asyncio.wait_for(future, timeout)
        finally:
            self.calls.pop(request_id, None)

    async def close(self) -> None:
        if self.closed is None:
            self._fail_all(ConnectionLost("closed by the client"))
        for task in self.tasks:
            if task is not asyncio.current_task():
                task.cancel()
        with contextlib.suppress(Exception):
            await self.socket.close()

    # -- the socket ----------------------------------------------------------------------

    def _next_id(self) -> str:
        if self.closed is not None:
            raise self.closed
        return str(next(self.ids))

    async def _send(self, message) -> None:
        if self.closed is not None:
            raise self.closed
        try:
            await self.socket.send(frames.encode(message))
        except websockets.ConnectionClosed as exc:
            self._fail_all(ConnectionLost(f"socket closed: {exc}"))
            raise self.closed from exc

    async def _read(self) -> None:
        try:
            async for data in self.socket:
                self.last_heard = time.monotonic()
                try:
                    messages = frames.decode(data)
                except msgspec.DecodeError as exc:
                    self._malformed(data, exc)
                    continue
                for message in messages:
                    await self._dispatch(message)
            self._fail_all(ConnectionLost("the server closed the socket"))
        except websockets.ConnectionClosed as exc:
            self._fail_all(ConnectionLost(f"socket closed: {exc}"))
        except Exception as exc:  # never leave subscribers waiting on a dead reader
            logger.exception("t3 rpc reader failed")
            self._fail_all(ConnectionLost(f"reader failed: {exc}"))

    async def _dispatch(self, message: frames.FromServer) -> None:
        if isinstance(message, frames.Ping):
            await self._send(frames.Pong())
        elif isinstance(message, frames.Defect):
            self._fail_all(DefectReceived(message.defect))
            await self.socket.close()
        elif isinstance(message, frames.Chunk):
            subscription = self.streams.get(str(message.requestId))
            if subscription is not None:
                subscription._push(StreamChunk(message.values))
        elif isinstance(message, frames.Exit):
            self._exit(str(message.requestId), message.exit)

    def _exit(self, request_id: str, exit: frames.Success | frames.Failure) -> None:
        failure = ExitFailure(exit.cause) if isinstance(exit, frames.Failure) else None
        if (subscription := self.streams.pop(request_id, None)) is not None:
            subscription._push(StreamError(failure) if failure else StreamDone(exit.value))
        elif (future := self.calls.get(request_id)) is not None and not future.done():
            if failure:
                future.set_exception(failure)
            else:
                future.set_result(exit.value)

    def _malformed(self, data, exc: Exception) -> None:
        """A frame this client cannot read ends only the request it names, if any."""
        request_id = frames.loose_request_id(data)
        logger.warning("t3 rpc: unreadable frame for request %s: %s", request_id, exc)
        error = RpcError(f"unreadable frame: {exc}")
        if request_id in self.streams:
            self.streams.pop(request_id)._push(StreamError(error))
            asyncio.get_running_loop().create_task(self._interrupt_quietly(request_id))
        elif request_id in self.calls and not self.calls[request_id].done():
            self.calls[request_id].set_exception(error)

    async def _interrupt_quietly(self, request_id: str) -> None:
        with contextlib.suppress(RpcError):
            await self._send(frames.Interrupt(requestId=request_id))

    async def _ping(self) -> None:
        while self.closed is None:
            await asyncio.sleep(min(self.ping_interval, self.dead_after))
            if time.monotonic() - self.last_heard > self.dead_after:
                self._fail_all(ConnectionLost(f"no frame for {self.dead_after:g} s"))
                await self.socket.close()
                return
            with contextlib.suppress(RpcError):
                await self._send(frames.Ping())

    def _fail_all(self, error: RpcError) -> None:
        if self.closed is None:
            self.closed = error
        for subscription in list(self.streams.values()):
            subscription._push(StreamError(error))
        self.streams.clear()
        for future in self.calls.values():
            if not future.done():
                future.set_exception(error)


def _urls(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    secure = parts.scheme in ("https", "wss")
    path = parts.path if parts.scheme in ("ws", "wss") and parts.path not in ("", "/") else "/ws"
    http_base = urlunsplit(("https" if secure else "http", parts.netloc, "", "", ""))
    return http_base, urlunsplit(("wss" if secure else "ws", parts.netloc, path, "", ""))


async def _ticket(http_base: str, token: str, timeout: float) -> str:
    try:
        async with httpx.AsyncClient(timeout=timeout) as http:
            response = await http.post(
                http_base + TICKET_PATH, headers={"Authorization": f"Bearer {token}"}
            )
    except httpx.HTTPError as exc:
        raise ConnectionLost(f"could not reach {http_base}: {exc}") from exc
    if response.status_code != 200:
        raise _refusal(response.status_code, response.content)
    ticket = response.json().get("ticket")
    if not isinstance(ticket, str) or not ticket:
        raise AuthFailed("the ticket endpoint returned no ticket")
    return ticket


def _refusal(status: int, body: bytes | None) -> RpcError:
    detail = (body or b"")[:300].decode(errors="replace")
    if status == 426:
        return ProtocolMismatch(f"HTTP 426: {detail}")
    if status in (401, 403):
        return AuthFailed(f"HTTP {status}: {detail}")
    return ConnectionLost(f"HTTP {status}: {detail}")
