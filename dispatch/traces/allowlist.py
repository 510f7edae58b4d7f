"""What the trace mirror may send: property names, tool names, and error text scrubbed bare.

Everything sent to PostHog is built from these names, and ``backstop`` (the client's
``before_send``) drops any property outside them, whatever a caller put in.
"""

from __future__ import annotations

import math
import re

TRACE_EVENTS = frozenset({"$ai_trace", "$ai_generation", "$ai_span"})

# Ours: identity and placement, usage, cost, stop reason, timing, the error flag and summary.
OWN_PROPERTIES = frozenset(
    {
        "$ai_trace_id",
        "$ai_session_id",
        "$ai_span_id",
        "$ai_span_name",
        "$ai_span_type",
        "$ai_parent_id",
        "$ai_model",
        "$ai_provider",
        "$ai_input_tokens",
        "$ai_output_tokens",
        "$ai_cache_read_input_tokens",
        "$ai_cache_creation_input_tokens",
        "$ai_cache_reporting_exclusive",
        "$ai_input_cost_usd",
        "$ai_output_cost_usd",
        "$ai_total_cost_usd",
        "$ai_stop_reason",
        "$ai_latency",
        "$ai_time_to_first_token",
        "$ai_stream",
        "$ai_http_status",
        "$ai_is_error",
        "$ai_error",
        "$process_person_profile",
    }
)

# What the SDK itself adds to every event: library and runtime, nothing about the run.
SDK_PROPERTIES = frozenset(
    {
        "$lib",
        "$lib_version",
        "$python_runtime",
        "$python_version",
        "$os",
        "$os_version",
        "$os_distro",
        "$geoip_disable",
        "$is_server",
    }
)

ALLOWED_PROPERTIES = OWN_PROPERTIES | SDK_PROPERTIES

# Pi's built-in tools. Anything else (an extension's, a custom one) is reported as "other":
# a tool name can itself say something about the work.
TOOL_NAMES = frozenset({"read", "bash", "edit", "write", "grep", "find", "ls"})

STOP_REASONS = frozenset({"stop", "length", "toolUse", "error", "aborted"})

# Provider/model ids are short tokens; anything else is not one.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,99}$")


def tool_name(name: object) -> str:
    return name if isinstance(name, str) and name in TOOL_NAMES else "other"


def identifier(value: object) -> str | None:
    return value if isinstance(value, str) and _ID.match(value) else None


def count(value: object) -> int | None:
    """A token count: a non-negative integer (bools and floats with a fraction are not)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and 0 <= value < 10**12 else None


def dollars(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) and 0 <= value < 10**6 else None


_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'|`[^`]*`|«[^»]*»")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
_EMAIL = re.compile(r"\S+@\S+")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\\/~.][\w.\-~]*)*[\\/][\w.\-~\\/]*")
_TOKEN = re.compile(r"\b(?=[\w-]*\d)[\w-]{12,}\b")  # ids, keys, hashes
_SPACE = re.compile(r"\s+")
_STATUS = re.compile(r"^\s*(\d{3})\b")


def error_summary(text: object, limit: int = 160) -> str:
    """A model error without what could quote a person or a machine: the first line, with
    quoted text, URLs, emails, paths and long ids removed."""
    if not isinstance(text, str):
        return ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    for pattern, mark in ((_QUOTED, "…"), (_URL, "…"), (_EMAIL, "…"), (_PATH, "…")):
        line = pattern.sub(mark, line)
    line = _TOKEN.sub("…", line)
    line = _SPACE.sub(" ", line).strip()
    return line[:limit]


def http_status(text: object) -> int | None:
    match = _STATUS.match(text) if isinstance(text, str) else None
    return int(match.group(1)) if match else None


def backstop(event: dict) -> dict | None:
    """``before_send``: only trace events leave, and only with allowlisted properties."""
    if event.get("event") not in TRACE_EVENTS:
        return None
    properties = event.get("properties") or {}
    event["properties"] = {k: v for k, v in properties.items() if k in ALLOWED_PROPERTIES}
    return event
