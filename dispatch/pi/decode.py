"""From Pi events to thread entry payloads, and the facts a reply needs from Pi's messages.

Pure functions over ``dispatch.pi.events``. The transcript (``pi.assistant``,
``pi.tool_result``, ``pi.compaction``) needs no state. Phase narration does: a round is the
turn number within a reply, and "answering" is told once per turn however many text deltas
arrive, so it lives in a ``Narration`` the caller keeps for the length of one reply.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dispatch.pi.events import (
    AutoRetryStart,
    CompactionEnd,
    MessageEnd,
    MessageUpdate,
    PiEvent,
    ToolExecutionStart,
    TurnStart,
)
from threads.entries import DispatchPhase, PiAssistant, PiCompaction, PiToolResult, Spend

Payload = PiAssistant | PiToolResult | PiCompaction | DispatchPhase

FAILED_STOPS = ("error", "aborted")


@dataclass
class Narration:
    """Where a reply is: its current round (-1 before the first turn) and whether this
    round's answer has started."""

    round: int = -1
    answering: bool = False


def payloads_for(
    event: PiEvent, dispatch_id: str, narration: Narration | None = None
) -> list[Payload]:
    """The payloads one event contributes to the thread, in order.

    Without ``narration`` only the transcript comes out; with it (one per reply), the
    ``signal.dispatch.phase`` entries too.
    """
    payloads: list[Payload] = []
    if narration is not None:
        phase = _phase(event, dispatch_id, narration)
        if phase is not None:
            payloads.append(phase)
    if isinstance(event, MessageEnd):
        role = event.message.get("role")
        if role == "assistant":
            payloads.append(PiAssistant(message=event.message, dispatchId=dispatch_id))
        elif role == "toolResult":
            payloads.append(PiToolResult(message=event.message, dispatchId=dispatch_id))
    elif isinstance(event, CompactionEnd):
        payloads.append(
            PiCompaction(
                reason=event.reason,
                result=event.result,
                aborted=event.aborted,
                dispatchId=dispatch_id,
            )
        )
    return payloads


def _phase(event: PiEvent, dispatch_id: str, narration: Narration) -> DispatchPhase | None:
    if isinstance(event, TurnStart):
        narration.round += 1
        narration.answering = False
        return DispatchPhase(dispatchId=dispatch_id, phase="thinking", round=narration.round)
    current = max(narration.round, 0)
    if isinstance(event, ToolExecutionStart):
        return DispatchPhase(
            dispatchId=dispatch_id, phase="tool", round=current, tool=event.toolName or None
        )
    if (
        isinstance(event, MessageUpdate)
        and event.assistantMessageEvent.type == "text_delta"
        and not narration.answering
    ):
        narration.answering = True
        return DispatchPhase(dispatchId=dispatch_id, phase="answering", round=current)
    if isinstance(event, AutoRetryStart):
        return DispatchPhase(dispatchId=dispatch_id, phase="retrying", round=current)
    return None


def _assistant_messages(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]


def spend_of(messages: Iterable[dict[str, Any]]) -> Spend:
    """The summed ``usage`` of the assistant messages (e.g. ``agent_end.messages``)."""
    spend = Spend()
    for message in _assistant_messages(messages):
        usage = message.get("usage") or {}
        spend.input += int(usage.get("input") or 0)
        spend.output += int(usage.get("output") or 0)
        spend.cacheRead += int(usage.get("cacheRead") or 0)
        spend.cacheWrite += int(usage.get("cacheWrite") or 0)
        spend.totalTokens += int(usage.get("totalTokens") or 0)
        spend.costUsd += float((usage.get("cost") or {}).get("total") or 0.0)
    return spend


def assistant_failure(message: dict[str, Any]) -> str | None:
    """Why an assistant message failed (Pi exits 0 even then), or None when it did not."""
    stop = message.get("stopReason")
    if stop not in FAILED_STOPS:
        return None
    fallback = "the model call was aborted" if stop == "aborted" else "the model call failed"
    return message.get("errorMessage") or fallback


def final_text(messages: Iterable[dict[str, Any]]) -> str:
    """The text of the last assistant message, its text parts joined as Pi joins them."""
    assistants = _assistant_messages(messages)
    if not assistants:
        return ""
    content = assistants[-1].get("content") or []
    if isinstance(content, str):
        return content.strip()
    texts = (p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "".join(texts).strip()
