"""The parts of Pi's messages that arbe reads, as typed shapes.

``pi.*`` payloads keep Pi's messages as Pi shaped them (unknown fields pass and
are stored untouched), but the fields that the current-view fold, the page and
the trace mirror read must have the types they expect: ``content`` a list of
parts that each name their ``type``, text a string, ``usage`` numbers. A writer
that sends anything else is refused (400) and a reader treats such an entry as
unreadable, so one malformed transcript entry can't break a thread.

The shapes only check; nothing is stored in them.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import Struct


class Part(Struct, gc=False):
    """One content part: text, thinking, a tool call or an image (other types pass)."""

    type: str
    text: str | None = None
    thinking: str | None = None
    id: str | None = None
    name: str | None = None
    arguments: Any = None


class Cost(Struct, gc=False):
    input: float = 0.0
    output: float = 0.0
    cacheRead: float = 0.0
    cacheWrite: float = 0.0
    total: float = 0.0


class Usage(Struct, gc=False):
    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheWrite: int = 0
    totalTokens: int = 0
    cost: Cost | None = None


class AssistantMessage(Struct, gc=False):
    role: Literal["assistant"] = "assistant"
    content: list[Part] = []
    usage: Usage | None = None
    stopReason: str | None = None
    errorMessage: str | None = None
    provider: str | None = None
    model: str | None = None


class ToolResultMessage(Struct, gc=False):
    role: Literal["toolResult"] = "toolResult"
    content: list[Part] = []
    toolCallId: str | None = None
    toolName: str | None = None
    isError: bool = False


class CompactionResult(Struct, gc=False):
    summary: str | None = None


SHAPES: dict[str, type] = {
    "pi.assistant": AssistantMessage,
    "pi.tool_result": ToolResultMessage,
}


def check_message(kind: str, message: dict[str, Any]) -> None:
    """Raise ``msgspec.ValidationError`` (naming the field) unless ``message`` fits ``kind``."""
    shape = SHAPES.get(kind)
    if shape is not None:
        msgspec.convert(message, shape)


def check_compaction(result: dict[str, Any] | None) -> None:
    if result is not None:
        msgspec.convert(result, CompactionResult)
