"""Chat text as safe HTML: the same Markdown for people and bots, in bounded time.

``markdown-it-py`` (CommonMark: no backtracking search for a link's or an
emphasis's end, unlike Python-Markdown, where ``"[" * 20000`` took 100 s) with
raw HTML off (``<b>`` stays the text ``<b>``), GFM tables and strikethrough,
single newlines kept. The chat's own passes over its tokens
(``threads.markup_rules``): bare URLs linked, known ``@handle``s marked as
mentions, images that are not same-site relative paths turned into links (an
off-site ``<img>`` would fetch a URL of the writer's choosing the moment a page
shows it: a bot could leak what it read that way). ``nh3`` cleans the result
last, as the backstop: allowed tags and attributes only, ``http``, ``https`` and
``mailto`` URLs only, ``target="_blank" rel="noopener noreferrer"`` on links.

Rendering is bounded (docs/security.md, "Rendering is bounded"). markdown-it is
linear in most shapes but not all (a mark may search to the end of its block),
so a text whose shape would cost too much — too many lines or table cells, too
many block tokens, nesting too deep, too many inline marks, or marks times block
length past a budget — is refused before the inline pass and shown as plain
text with its line breaks. The thread's CPU time is checked between blocks and
at the end as the backstop: past :data:`RENDER_LIMIT_NS` the message is shown as
plain text too. Either way the result is cached like any other. Code on an
event loop renders in a thread (``threads.render_pool``), never on the loop.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Mapping
from html import escape

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore

from threads.markup_rules import autolinks, mentions, offsite_images, table_align, unsafe_links

logger = logging.getLogger(__name__)

# The shape budget, measured in docs/security.md: past any of these, plain text.
MAX_LINES = 300  # the block pass costs up to ~45 µs a line (nested list items)
# Each line is walked through every container open above it: the block pass costs about
# the sum of the lines' leading quote and list markers and indentation.
MAX_PREFIX = 1500
MAX_PIPES = 1000  # table cells: a table's block pass costs per cell, not per line
MAX_BLOCK_TOKENS = 1500  # a 300-item list; a 20,000-character chat rarely has 300 tokens
MAX_DEPTH = 12  # block nesting (quotes in lists in quotes …): the block pass costs per level
MAX_MARKS = 800  # characters where the inline parser stops to try its rules
# A mark may search to the end of its block (a link's destination or title, a code span's
# closing run): the inline pass costs up to marks x length, summed over blocks.
MAX_INLINE_COST = 1_000_000
# The backstop: thread CPU time for one render, checked between blocks and at the end.
RENDER_LIMIT_NS = 100_000_000

TAGS = {
    "a", "p", "br", "hr", "strong", "em", "s", "del", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "img",
}  # fmt: skip
CLEANER = nh3.Cleaner(
    tags=TAGS,
    attributes={
        "a": {"href", "title", "class", "data-agent"},
        "img": {"src", "alt", "title"},
        "code": {"class"},
        "th": {"align"},
        "td": {"align"},
        "ol": {"start"},
    },
    url_schemes={"http", "https", "mailto"},
    link_rel="noopener noreferrer",
    set_tag_attribute_values={"a": {"target": "_blank"}},  # a link never replaces the thread
)


class Refused(Exception):
    """The text's shape is past the budget: it is shown as plain text."""


class Overtime(Exception):
    """The render ran past :data:`RENDER_LIMIT_NS`: it is shown as plain text."""


LEADING = re.compile(r"^[ \t>*+.)\d-]+", re.MULTILINE)


def _marks(state: StateCore, text: str) -> int:
    # The inline parser's own stop characters ("[", "*", "`", "<", "\n", …), and "www."
    # where a bare link starts with none of them (each link is tokens to make and render).
    return len(state.md.inline.terminator_re.findall(text)) + text.lower().count("www.")


def budget(state: StateCore) -> None:
    """Before the inline pass: refuse a shape that would cost too much."""
    tokens = state.tokens
    if len(tokens) > MAX_BLOCK_TOKENS:
        raise Refused(f"{len(tokens)} block tokens")
    marks = cost = 0
    for token in tokens:
        if token.level >= MAX_DEPTH:
            raise Refused(f"nesting {token.level}")
        if token.type == "inline":
            here = _marks(state, token.content)
            marks, cost = marks + here, cost + here * len(token.content)
    if marks > MAX_MARKS or cost > MAX_INLINE_COST:
        raise Refused(f"{marks} marks, cost {cost}")
    _check_time(state)


def inline(state: StateCore) -> None:
    """markdown-it's own inline pass, with the time checked before each block's inlines."""
    for token in state.tokens:
        if token.type == "inline":
            _check_time(state)
            token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)


def _check_time(state: StateCore) -> None:
    if time.thread_time_ns() > state.env["deadline"]:
        raise Overtime


def _parser() -> MarkdownIt:
    # "breaks": a single newline is a line break, as people type in chat.
    # Past maxNesting the parser drops the rest of the block; budget() refuses the text
    # first (a container at MAX_DEPTH), so nothing written is lost.
    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "maxNesting": MAX_DEPTH + 1})
    md.enable(["table", "strikethrough"])
    # Every link is made, whatever its scheme, so "[bad](javascript:…)" still reads "bad":
    # unsafe_links (after images became links) takes the href of what isn't allowed.
    md.validateLink = lambda url: True
    md.core.ruler.before("inline", "budget", budget)
    md.core.ruler.at("inline", inline)
    md.core.ruler.push("autolinks", autolinks)
    md.core.ruler.push("offsite_images", offsite_images)
    md.core.ruler.push("unsafe_links", unsafe_links)
    md.core.ruler.push("mentions", mentions)
    md.core.ruler.push("table_align", table_align)
    return md


# Stateless between calls (handles and the deadline travel in ``env``): one for all threads.
MD = _parser()

LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)]) +\S")
FENCE = re.compile(r"^ {0,3}(?:```|~~~)")


def lists_after_text(text: str) -> str:
    """A list may start right under a line of text, as people type it in chat.

    CommonMark lets a bullet list or one starting at "1." interrupt a paragraph but not
    "2."; this adds the blank line before any list item right under text, outside fences.
    """
    if "\n" not in text:
        return text
    out, fenced, previous = [], False, ""
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and LIST_ITEM.match(line) and _is_text(previous):
            out.append("")
        out.append(line)
        previous = line
    return "\n".join(out)


def _is_text(line: str) -> bool:
    """A line of plain paragraph text (not blank, not a list item, not indented)."""
    return bool(line.strip()) and not LIST_ITEM.match(line) and not line.startswith((" ", "\t"))


def plain_html(text: str) -> str:
    """The fallback: the text escaped, its line breaks kept."""
    return "<p>" + escape(text, quote=False).replace("\n", "<br>\n") + "</p>"


def chat_html(text: str, handles: Mapping[str, str] | None = None) -> str:
    """``text`` (Markdown) as clean HTML; ``handles`` maps known handles to agent ids."""
    return _cached_html(text, tuple(sorted((handles or {}).items())))


def render(text: str, handles: Mapping[str, str], limit_ns: int | None = None) -> str:
    """Render now, uncached: Markdown, or plain text when refused or past ``limit_ns`` of
    this thread's CPU time (default :data:`RENDER_LIMIT_NS`)."""
    start = time.thread_time_ns()
    # The parser reads "\r" and "\r\n" as line ends too: count lines as it will see them.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    limit = RENDER_LIMIT_NS if limit_ns is None else limit_ns
    env = {"handles": handles, "deadline": start + limit}
    try:
        if text.count("\n") >= MAX_LINES or text.count("|") > MAX_PIPES:
            raise Refused("lines or cells")
        if sum(map(len, LEADING.findall(text))) > MAX_PREFIX:
            raise Refused("nesting")
        tokens = MD.parse(lists_after_text(text), env)
        html = MD.renderer.render(tokens, MD.options, env)
        if time.thread_time_ns() > env["deadline"]:
            raise Overtime
    except Refused:
        return plain_html(text)
    except Overtime:
        spent = (time.thread_time_ns() - start) // 1_000_000
        logger.warning("chat render over its limit (%d ms CPU, %d chars)", spent, len(text))
        return plain_html(text)
    except Exception:  # noqa: BLE001 - a parser bug must not hide what was written
        logger.exception("chat render failed (%d chars); shown as plain text", len(text))
        return plain_html(text)
    return CLEANER.clean(html)


# Entries never change, and every page load renders the thread's chat again: the HTML of
# recent messages is kept (per text and set of known handles, so a new member's mentions
# still show). A refused or overtime render is cached the same: it is not tried again.
@functools.lru_cache(maxsize=4096)
def _cached_html(text: str, handles: tuple[tuple[str, str], ...]) -> str:
    return render(text, dict(handles))
