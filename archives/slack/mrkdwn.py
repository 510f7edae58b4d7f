"""Slack's mrkdwn to the site's Markdown, in one linear pass per message.

Slack escapes ``&``, ``<`` and ``>`` in text and writes links, mentions and channel names
inside ``<…>``. Code (inline and fenced) is kept as it is, apart from those escapes;
outside it ``*bold*`` becomes ``**bold**`` and ``~strike~`` becomes ``~~strike~~``
(``_italic_`` and ``> quotes`` mean the same in both). Every pattern is a bounded regex
without nested quantifiers, over text the caller has already cut to the chat limit.
"""

from __future__ import annotations

import html
import re

ANGLE = re.compile(r"<([^<>\n]{1,2000})>")
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
BOLD = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]{1,2000}?)(?<=\S)\*(?![\w*])")
STRIKE = re.compile(r"(?<![\w~])~(?=\S)([^~\n]{1,2000}?)(?<=\S)~(?![\w~])")
SPECIAL = {"here": "@here", "channel": "@channel", "everyone": "@everyone"}


def _angle(match: re.Match, handles: dict[str, str], channels: dict[str, str]) -> str:
    inner = match.group(1)
    target, _, label = inner.partition("|")
    if target.startswith("@"):
        handle = handles.get(target[1:])
        return f"@{handle}" if handle else f"@{label or target[1:]}"
    if target.startswith("#"):
        name = channels.get(target[1:]) or label or target[1:]
        return f"#{name}"
    if target.startswith("!"):
        word = target[1:].split("^", 1)[0]
        return SPECIAL.get(word) or (label if label.startswith("@") else f"@{label or word}")
    if target.startswith("mailto:"):
        return label or target[len("mailto:") :]
    if re.match(r"^(https?|ftp)://", target):
        return f"[{label}]({target})" if label and label != target else target
    return html.unescape(match.group(0))


def _outside_code(text: str, handles, channels) -> str:
    text = ANGLE.sub(lambda m: _angle(m, handles, channels), text)
    text = BOLD.sub(r"**\1**", text)
    text = STRIKE.sub(r"~~\1~~", text)
    return html.unescape(text)


def to_markdown(text: str, handles: dict[str, str], channels: dict[str, str]) -> str:
    """``text`` in Markdown; ``handles`` maps Slack user ids to handles here, ``channels``
    channel ids to names."""
    out, last = [], 0
    for code in CODE.finditer(text):
        out.append(_outside_code(text[last : code.start()], handles, channels))
        out.append(html.unescape(code.group(0)))
        last = code.end()
    out.append(_outside_code(text[last:], handles, channels))
    return "".join(out)
