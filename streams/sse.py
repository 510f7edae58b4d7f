"""Incremental Server-Sent Events parsing, and the Durable Streams reading of it.

``SSEParser`` follows the WHATWG event-stream rules (lines end in CRLF, LF or
CR; ``data`` lines join with LF; one leading space after the colon is dropped;
lines starting with a colon are comments) and accepts bytes cut anywhere,
including between a CR and its LF or inside a UTF-8 sequence.

``SSEReader`` folds Durable Streams ``data`` events into the ``control`` event
that follows them: each fold is one batch with the offset after it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass, field

import msgspec


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str
    data: str
    id: str | None = None


class SSEParser:
    """Feed bytes, get complete events; keeps partial lines between calls."""

    def __init__(self) -> None:
        self._buffer = b""
        # A chunk ended in CR: an LF starting the next chunk belongs to that line end.
        self._skip_lf = False
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        if not chunk:
            return []
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        buffer = self._buffer + chunk
        events = []
        start = 0
        length = len(buffer)
        while True:
            cr = buffer.find(b"\r", start)
            lf = buffer.find(b"\n", start)
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                end, step = cr, 1
                if cr + 1 < length:
                    if buffer[cr + 1 : cr + 2] == b"\n":
                        step = 2
                else:
                    self._skip_lf = True
            else:
                end, step = lf, 1
            event = self._line(buffer[start:end].decode("utf-8", "replace"))
            if event is not None:
                events.append(event)
            start = end + step
        self._buffer = buffer[start:]
        return events

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None

    def _dispatch(self) -> SSEEvent | None:
        event, data, self._event = self._event, self._data, ""
        self._data = []
        if not data:
            return None
        return SSEEvent(event=event or "message", data="\n".join(data), id=self._id)


class Control(msgspec.Struct, frozen=True):
    """The body of a Durable Streams ``control`` event (camelCase on the wire)."""

    streamNextOffset: str
    streamCursor: str | None = None
    upToDate: bool = False
    streamClosed: bool = False


@dataclass(slots=True)
class SSEBatch:
    """The data events before one control event, with what the control event said."""

    chunks: list[bytes] = field(default_factory=list)
    control: Control | None = None


_control_decoder = msgspec.json.Decoder(Control)


class SSEReader:
    """Turns SSE bytes from a Durable Streams read into ``SSEBatch`` objects."""

    def __init__(self, *, base64_data: bool = False) -> None:
        self.base64_data = base64_data
        self._parser = SSEParser()
        self._pending: list[bytes] = []

    def feed(self, chunk: bytes) -> Iterator[SSEBatch]:
        for event in self._parser.feed(chunk):
            if event.event == "data":
                self._pending.append(self._decode_data(event.data))
            elif event.event == "control":
                batch = SSEBatch(chunks=self._pending, control=_control_decoder.decode(event.data))
                self._pending = []
                yield batch

    def _decode_data(self, text: str) -> bytes:
        if not self.base64_data:
            return text.encode()
        # Base64 text may span data lines: join, then drop every CR and LF.
        compact = text.replace("\r", "").replace("\n", "")
        try:
            return base64.b64decode(compact, validate=True)
        except binascii.Error as exc:
            raise ValueError("invalid base64 in an SSE data event") from exc
