"""Making Pi's failures fit for a thread: no server paths, one short line.

Pi's errors carry what a person can act on ("No API key found for openai") wrapped in
what nobody should see (stack frames into ``node_modules``, the server's home and
``var/`` directories). ``scrub`` takes the paths out of any text before it is appended;
``short_reason`` turns a failure into the few words the thread narrates.
"""

from __future__ import annotations

import re

# An absolute path (two or more segments), a relative one into our own trees, or a file
# URL; stack frames ("at fn (/x/y.js:1:2)") go with them.
_PATH = re.compile(
    r"(?:file://)?(?:~|\.{1,2})?/(?:[\w.@+%-]+/)+[\w.@+%-]*(?::\d+)*"
    r"|\b(?:node_modules|var|site-packages)/[\w./@+%-]*(?::\d+)*"
)
_FRAME = re.compile(r"^\s*at .*$", re.MULTILINE)
_SPACE = re.compile(r"[ \t]+")

NO_KEY = re.compile(r"no api key (?:found )?for ([\w.-]+)", re.IGNORECASE)
CONFIG_HINT = "an owner can fix it on the members page"


def scrub(text: str) -> str:
    """``text`` without stack frames or server paths (each path becomes ``…``)."""
    text = _FRAME.sub("", text or "")
    text = _PATH.sub("…", text)
    lines = [_SPACE.sub(" ", line).strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line)


def is_config_error(text: str) -> bool:
    """A failure only an owner's change can fix (a missing key, an unknown provider)."""
    lowered = (text or "").lower()
    return (
        bool(NO_KEY.search(text or ""))
        or "has no provider" in lowered
        or ("not set on the server" in lowered)
    )


def short_reason(text: str, limit: int = 120) -> str:
    """The failure in a few words: the first sentence of its first line, scrubbed."""
    match = NO_KEY.search(text or "")
    if match:
        return f"no API key for {match.group(1).rstrip('.')}"
    first = next(iter(scrub(text).splitlines()), "")
    first = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0].rstrip(".")
    first = re.sub(r"^(?:Error: |Pi refused \w+: |cannot start Pi: )", "", first)
    return (first[: limit - 1] + "…") if len(first) > limit else (first or "it failed")
