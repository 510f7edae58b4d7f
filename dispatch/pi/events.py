"""Pi's RPC output as typed events: one msgspec struct per ``type``.

Pi writes one JSON object per line on stdout: replies to commands (``response``) and agent
events. Messages stay dicts (``message["role"]``): they are Pi's shapes and pass through to
``pi.*`` entries untouched. An event type this module doesn't know, or a known one that
doesn't match its struct, decodes to ``UnknownEvent`` rather than failing: a newer Pi must
not crash a reply.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import Struct, field


class Event(Struct, tag_field="type", gc=False):
    @property
    def type(self) -> str:
        return self.__struct_config__.tag  # type: ignore[return-value]


class AgentStart(Event, tag="agent_start"):
    pass


class AgentEnd(Event, tag="agent_end"):
    """The end of one agent run; ``messages`` holds only the messages this run produced."""

    messages: list[dict[str, Any]] = field(default_factory=list)


class TurnStart(Event, tag="turn_start"):
    pass


class TurnEnd(Event, tag="turn_end"):
    message: dict[str, Any] = field(default_factory=dict)
    toolResults: list[dict[str, Any]] = field(default_factory=list)


class MessageStart(Event, tag="message_start"):
    message: dict[str, Any] = field(default_factory=dict)


class AssistantMessageEvent(Struct, gc=False):
    """A streaming delta. ``partial`` is left out on purpose: Pi mutates it before writing
    it, and it repeats the whole message on every delta."""

    type: str = ""
    contentIndex: int = 0
    delta: str | None = None
    content: str | None = None
    toolCall: dict[str, Any] | None = None


class MessageUpdate(Event, tag="message_update"):
    message: dict[str, Any] = field(default_factory=dict)
    assistantMessageEvent: AssistantMessageEvent = field(default_factory=AssistantMessageEvent)


class MessageEnd(Event, tag="message_end"):
    message: dict[str, Any] = field(default_factory=dict)


class ToolExecutionStart(Event, tag="tool_execution_start"):
    toolCallId: str = ""
    toolName: str = ""
    args: Any = None


class ToolExecutionUpdate(Event, tag="tool_execution_update"):
    toolCallId: str = ""
    toolName: str = ""
    args: Any = None
    partialResult: Any = None


class ToolExecutionEnd(Event, tag="tool_execution_end"):
    toolCallId: str = ""
    toolName: str = ""
    result: Any = None
    isError: bool = False


class CompactionStart(Event, tag="compaction_start"):
    reason: str = ""


class CompactionEnd(Event, tag="compaction_end"):
    reason: str = ""
    result: dict[str, Any] | None = None
    aborted: bool = False
    willRetry: bool = False
    errorMessage: str | None = None


class AutoRetryStart(Event, tag="auto_retry_start"):
    attempt: int = 0
    maxAttempts: int = 0
    delayMs: int = 0
    errorMessage: str = ""


class AutoRetryEnd(Event, tag="auto_retry_end"):
    success: bool = False
    attempt: int = 0
    finalError: str | None = None


class QueueUpdate(Event, tag="queue_update"):
    steering: list[str] = field(default_factory=list)
    followUp: list[str] = field(default_factory=list)


class Response(Event, tag="response"):
    """Pi's reply to a command; ``id`` echoes the command's id."""

    command: str = ""
    success: bool = False
    id: str | None = None
    data: Any = None
    error: str | None = None


class UnknownEvent(Struct, gc=False):
    """Any other line: its ``type`` and the whole object as Pi wrote it."""

    type: str
    data: dict[str, Any] = field(default_factory=dict)


KnownEvent = (
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | CompactionStart
    | CompactionEnd
    | AutoRetryStart
    | AutoRetryEnd
    | QueueUpdate
    | Response
)
PiEvent = KnownEvent | UnknownEvent

EVENT_TYPES: dict[str, type[Event]] = {
    cls.__struct_config__.tag: cls
    for cls in KnownEvent.__args__  # type: ignore[attr-defined]
}

_known = msgspec.json.Decoder(KnownEvent)
_any = msgspec.json.Decoder()


class ProtocolError(ValueError):
    """A stdout line that is not a JSON object."""


def decode_event(line: bytes | str) -> PiEvent:
    """Decode one line (without its ``\\n``; a trailing ``\\r`` is tolerated)."""
    if isinstance(line, str):
        line = line.encode()
    line = line.removesuffix(b"\r")
    try:
        return _known.decode(line)
    except msgspec.ValidationError:
        pass  # an unknown type, or a known one in a shape we don't expect
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    data = _any.decode(line)
    if not isinstance(data, dict):
        raise ProtocolError(f"not a JSON object: {type(data).__name__}")
    return UnknownEvent(type=str(data.get("type", "")), data=data)


def placeholder_event(head: bytes) -> PiEvent:
    """The event of a line too long to keep, from its first bytes: Pi writes ``type`` first,
    so a known type still comes out (with empty fields) and ``agent_end`` still ends a run."""
    marker = b'"type":"'
    start = head.find(marker)
    kind = ""
    if start != -1:
        start += len(marker)
        end = head.find(b'"', start)
        kind = head[start:end].decode(errors="replace") if end != -1 else ""
    cls = EVENT_TYPES.get(kind)
    return cls() if cls is not None else UnknownEvent(type=kind, data={"oversized": True})
