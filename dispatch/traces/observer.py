"""One Pi invocation as a PostHog trace: a generation per model call, a span per tool run.

``TraceObserver.see`` takes Pi's events as ``PiSession`` reads them (so timings are Pi's,
not those of a consumer busy appending entries); ``close`` ends the trace.
Nothing it reads is content: only usage, cost, model, stop reason, allowlisted tool names,
timing and a scrubbed error summary reach ``send`` (see docs/traces.md). Data it can't use
(a tool end without its start, a malformed usage block, a turn cut off by a crash) is left
out field by field, never taking the valid spend around it along. It never raises.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from dispatch.pi.events import (
    CompactionEnd,
    CompactionStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from dispatch.traces import allowlist, client

logger = logging.getLogger(__name__)

FAILED_STOPS = ("error", "aborted")

Send = Callable[[str, str, dict, datetime], None]


@dataclass
class _Open:
    span_id: str
    at: datetime
    started: float
    name: str = ""
    parent: str = ""
    first_token: float | None = None
    pi_started: float | None = None  # Pi's own clock (s), when the message says


@dataclass
class TraceObserver:
    session_id: str  # the thread the work happens in
    distinct_id: str  # the bot's agent id
    name: str  # "reply" or "coding_run"
    send: Send = client.send
    trace_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    _started: float = 0.0
    _at: datetime | None = None
    _turn: int = 0
    _generation: _Open | None = None
    _requested: dict[str, str] = field(default_factory=dict)  # tool call id → generation span
    _tools: dict[str, _Open] = field(default_factory=dict)
    _compaction: _Open | None = None
    _last_stop: str | None = None
    _last_error: str = ""
    _closed: bool = False

    def __post_init__(self) -> None:
        self._started = self.clock()
        self._at = _now()

    def see(self, event) -> None:
        """One Pi event, as it is read (``PiSession.observe``)."""
        if self._closed:
            return
        try:
            self._see(event)
        except Exception:
            logger.warning("trace mirror skipped an event", exc_info=True)

    def close(self, error: str = "") -> None:
        """End the trace: ``error`` is the caller's failure, if the run failed outside the
        model (a crash, a timeout); open turns and tool runs are dropped, not guessed at."""
        if self._closed:
            return
        self._closed = True
        try:
            failed = bool(error) or self._last_stop in FAILED_STOPS or self._last_stop is None
            props = self._base(self.trace_id, self.name, parent=None)
            props["$ai_latency"] = self._since(self._started)
            props["$ai_is_error"] = failed
            summary = allowlist.error_summary(error or self._last_error)
            if failed and summary:
                props["$ai_error"] = summary
            self._emit("$ai_trace", props, self._at)
        except Exception:
            logger.warning("trace mirror could not close a trace", exc_info=True)

    # -- events

    def _see(self, event) -> None:
        if isinstance(event, MessageStart) and _role(event) == "assistant":
            self._turn += 1
            self._generation = _Open(str(uuid.uuid4()), _now(), self.clock())
            self._generation.pi_started = self._pi_time(event.message.get("timestamp"))
        elif isinstance(event, MessageUpdate) and self._generation is not None:
            if self._generation.first_token is None and event.assistantMessageEvent.delta:
                self._generation.first_token = self.clock()
        elif isinstance(event, MessageEnd) and _role(event) == "assistant":
            self._generation_ended(event.message)
        elif isinstance(event, ToolExecutionStart):
            parent = self._requested.get(event.toolCallId) if event.toolCallId else None
            span = _Open(str(uuid.uuid4()), _now(), self.clock(), name=event.toolName)
            span.parent = parent or self.trace_id
            if event.toolCallId:
                self._tools[event.toolCallId] = span
        elif isinstance(event, ToolExecutionEnd):
            span = self._tools.pop(event.toolCallId, None) if event.toolCallId else None
            if span is not None:  # a result without its call is dropped
                self._tool_ended(span, bool(event.isError))
        elif isinstance(event, CompactionStart):
            self._compaction = _Open(str(uuid.uuid4()), _now(), self.clock())
        elif isinstance(event, CompactionEnd) and self._compaction is not None:
            span, self._compaction = self._compaction, None
            props = self._base(span.span_id, "compaction", parent=self.trace_id)
            props["$ai_span_type"] = "compaction"
            props["$ai_latency"] = self._since(span.started)
            props["$ai_is_error"] = bool(event.aborted or event.errorMessage)
            self._emit("$ai_span", props, span.at)

    def _generation_ended(self, message: dict) -> None:
        opened, self._generation = self._generation, None
        if opened is None:  # its start was lost: the spend still counts, the timing doesn't
            self._turn += 1
            opened = _Open(str(uuid.uuid4()), _now(), self.clock())
            latency = None
        else:
            latency = self._since(opened.started)
            if opened.pi_started is not None:
                # Pi stamps the request's start: a busy reader can't shorten what that measures.
                latency = max(latency, round(self.wall() - opened.pi_started, 3))
        props = self._base(opened.span_id, f"turn_{self._turn}", parent=self.trace_id)
        props["$ai_stream"] = True
        if latency is not None:
            props["$ai_latency"] = latency
            if opened.first_token is not None:
                props["$ai_time_to_first_token"] = round(opened.first_token - opened.started, 3)
        _put(props, "$ai_model", allowlist.identifier(message.get("model")))
        _put(props, "$ai_provider", allowlist.identifier(message.get("provider")))
        props.update(_usage(message.get("usage")))
        stop = message.get("stopReason")
        stop = stop if stop in allowlist.STOP_REASONS else None
        _put(props, "$ai_stop_reason", stop)
        failed = stop in FAILED_STOPS
        props["$ai_is_error"] = failed
        if failed:
            raw = message.get("errorMessage")
            _put(props, "$ai_error", allowlist.error_summary(raw) or None)
            _put(props, "$ai_http_status", allowlist.http_status(raw))
            self._last_error = raw if isinstance(raw, str) else ""
        self._last_stop = stop or "unknown"
        for part in message.get("content") or ():
            if isinstance(part, dict) and part.get("type") == "toolCall":
                call_id = part.get("id")
                if isinstance(call_id, str) and call_id:
                    self._requested[call_id] = opened.span_id
        self._emit("$ai_generation", props, opened.at)

    def _tool_ended(self, span: _Open, failed: bool) -> None:
        props = self._base(span.span_id, allowlist.tool_name(span.name), parent=span.parent)
        props["$ai_span_type"] = "tool"
        props["$ai_latency"] = self._since(span.started)
        props["$ai_is_error"] = failed
        self._emit("$ai_span", props, span.at)

    # -- building

    def _base(self, span_id: str, name: str, *, parent: str | None) -> dict:
        props = {
            "$ai_trace_id": self.trace_id,
            "$ai_session_id": self.session_id,
            "$ai_span_name": name,
            "$process_person_profile": False,
        }
        if span_id != self.trace_id:
            props["$ai_span_id"] = span_id
        if parent is not None:
            props["$ai_parent_id"] = parent
        return props

    def _pi_time(self, ms: object) -> float | None:
        """Pi's millisecond timestamp in seconds, if it is one and within the last hour."""
        if isinstance(ms, bool) or not isinstance(ms, int | float):
            return None
        seconds = ms / 1000
        return seconds if 0 <= self.wall() - seconds <= 3600 else None

    def _since(self, started: float) -> float:
        return round(max(self.clock() - started, 0.0), 3)

    def _emit(self, event: str, props: dict, at: datetime | None) -> None:
        unexpected = set(props) - allowlist.OWN_PROPERTIES
        for key in unexpected:  # the builder's own guard; before_send is the backstop
            props.pop(key)
        self.send(event, self.distinct_id, props, at or _now())


def _usage(usage: object) -> dict:
    """Pi's usage block as PostHog's: each valid field kept, each invalid one left out.
    Pi's ``input`` excludes cached tokens, so cache reporting is exclusive."""
    if not isinstance(usage, dict):
        return {}
    props: dict = {}
    for source, target in (
        ("input", "$ai_input_tokens"),
        ("output", "$ai_output_tokens"),
        ("cacheRead", "$ai_cache_read_input_tokens"),
        ("cacheWrite", "$ai_cache_creation_input_tokens"),
    ):
        _put(props, target, allowlist.count(usage.get(source)))
    if props:
        props["$ai_cache_reporting_exclusive"] = True
    cost = usage.get("cost")
    if isinstance(cost, dict):
        inputs = [allowlist.dollars(cost.get(k)) for k in ("input", "cacheRead", "cacheWrite")]
        if inputs[0] is not None:
            props["$ai_input_cost_usd"] = round(sum(v for v in inputs if v is not None), 9)
        _put(props, "$ai_output_cost_usd", allowlist.dollars(cost.get("output")))
        _put(props, "$ai_total_cost_usd", allowlist.dollars(cost.get("total")))
    return props


def _put(props: dict, key: str, value) -> None:
    if value is not None:
        props[key] = value


def _role(event) -> str:
    message = event.message if isinstance(event.message, dict) else {}
    return message.get("role", "")


def _now() -> datetime:
    return datetime.now(UTC)


def observer(*, session_id: str, distinct_id: str, name: str) -> TraceObserver:
    """A fresh trace (a new trace id, also when Pi continues its session) for one Pi run."""
    return TraceObserver(session_id=session_id, distinct_id=distinct_id, name=name)
