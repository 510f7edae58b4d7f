"""Idempotent producers: exactly-once appends with ``(Producer-Id, Epoch, Seq)``.

Retries of transient failures resend the same sequence number, so the server
answers a repeat as a duplicate and the message lands once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

from streams import errors, wire
from streams.wire import JSON, AppendResult, Backoff, Call, append_call, decode_append


@dataclass(slots=True)
class ProducerState:
    """An idempotent producer's identity and position: ``(id, epoch, next seq)``.

    A retry after a transient failure resends the *same* seq, so the server
    answers 204 (duplicate) if the first try landed: an append happens once.
    """

    producer_id: str
    epoch: int = 0
    seq: int = 0
    auto_claim: bool = False
    backoff: Backoff = field(default_factory=Backoff)

    def call(self, name: str, body: bytes, content_type: str, close: bool = False) -> Call:
        return append_call(
            name,
            body,
            content_type=content_type,
            close=close,
            producer=(self.producer_id, self.epoch, self.seq),
        )

    def feed(self, response: httpx.Response) -> AppendResult | None:
        """The result, or None to send again (after an auto-claim took a new epoch)."""
        try:
            result = decode_append(response)
        except errors.ProducerStale as exc:
            if not self.auto_claim:
                raise
            self.epoch, self.seq = exc.current_epoch + 1, 0
            return None
        self.seq += 1
        return result

    def retry_delay(self, attempt: int, error: errors.StreamError) -> float:
        """Seconds to wait before resending the same seq; re-raises what is not transient."""
        if not error.transient or attempt + 1 >= self.backoff.attempts:
            raise error
        return self.backoff.delay(attempt, error)


class _ProducerBase:
    def __init__(
        self,
        client,
        name: str,
        producer_id: str,
        *,
        epoch: int = 0,
        seq: int = 0,
        auto_claim: bool = False,
        content_type: str = JSON,
        backoff: wire.Backoff | None = None,
    ):
        self.client = client
        self.name = name
        self.content_type = content_type
        self.state = ProducerState(producer_id, epoch, seq, auto_claim, backoff or wire.Backoff())


class IdempotentProducer(_ProducerBase):
    """Exactly-once appends: ``(Producer-Id, Epoch, Seq)``, retrying transient failures.

    ``auto_claim=True`` answers a 403 (another epoch has written) by taking the
    next epoch; off by default, since it fences out the other writer.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lock = threading.Lock()

    def append(self, message: Any) -> AppendResult:
        return self._send(self.client._body(message, self.content_type))

    def append_batch(self, messages: Iterable[Any]) -> AppendResult:
        return self._send(wire.batch_body(messages))

    def close(self, message: Any = None) -> AppendResult:
        body = b"" if message is None else self.client._body(message, self.content_type)
        return self._send(body, close=True)

    def _send(self, body: bytes, close: bool = False) -> AppendResult:
        with self._lock:
            attempt = 0
            while True:
                call = self.state.call(self.name, body, self.content_type, close)
                try:
                    result = self.state.feed(self.client.send(call))
                except errors.StreamError as exc:
                    time.sleep(self.state.retry_delay(attempt, exc))
                    attempt += 1
                    continue
                if result is not None:
                    return result


class AsyncIdempotentProducer(_ProducerBase):
    """The async twin of ``IdempotentProducer``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lock = asyncio.Lock()

    async def append(self, message: Any) -> AppendResult:
        return await self._send(self.client._body(message, self.content_type))

    async def append_batch(self, messages: Iterable[Any]) -> AppendResult:
        return await self._send(wire.batch_body(messages))

    async def close(self, message: Any = None) -> AppendResult:
        body = b"" if message is None else self.client._body(message, self.content_type)
        return await self._send(body, close=True)

    async def _send(self, body: bytes, close: bool = False) -> AppendResult:
        async with self._lock:
            attempt = 0
            while True:
                call = self.state.call(self.name, body, self.content_type, close)
                try:
                    result = self.state.feed(await self.client.send(call))
                except errors.StreamError as exc:
                    await asyncio.sleep(self.state.retry_delay(attempt, exc))
                    attempt += 1
                    continue
                if result is not None:
                    return result
