"""Chat text as safe HTML: the same Markdown for people and bots.

Python-Markdown with raw HTML turned off (its ``html_block`` preprocessor and
``html`` inline pattern are deregistered, so ``<b>`` stays the text ``<b>``),
bare URLs linked by ``pymdownx.magiclink``, known ``@handle``s marked as
mentions, and images that are not same-site relative paths turned into links
(an off-site ``<img>`` would fetch a URL of the writer's choosing the moment a
page shows it: a bot could leak what it read that way). ``nh3`` cleans the
result last, as the backstop: allowed tags and attributes only, ``http``,
``https`` and ``mailto`` URLs only, ``target="_blank" rel="noopener noreferrer"`` on links.
"""

from __future__ import annotations

import functools
import re
import threading
import xml.etree.ElementTree as etree
from collections.abc import Mapping

import markdown
import nh3
from markdown.extensions import Extension
from markdown.inlinepatterns import InlineProcessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

# A path on this site: one leading slash, no "//host" or "/\host", plain characters.
SAME_SITE_PATH = re.compile(r"^/(?![/\\])[A-Za-z0-9/_.\-~%]*$")
# "@handle" at the start or after a space or opening punctuation, never inside a word
# or an address (handles: houses.models.HANDLE_PATTERN).
MENTION = r"(?<![\w@./-])@([a-z0-9][a-z0-9_-]{0,31})\b"

TAGS = {
    "a", "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote",
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


class Mentions(InlineProcessor):
    """``@handle`` of someone in the house -> ``<a class="mention" data-agent="ID">``."""

    def __init__(self, pattern, md):
        super().__init__(pattern, md)
        self.handles: Mapping[str, str] = {}

    def handleMatch(self, m, data):  # noqa: N802 (Python-Markdown's name)
        agent_id = self.handles.get(m.group(1))
        if agent_id is None:
            return None, None, None
        link = etree.Element("a", {"class": "mention", "data-agent": agent_id})
        link.text = "@" + m.group(1)
        return link, m.start(0), m.end(0)


LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)]) +\S")
FENCE = re.compile(r"^ {0,3}(?:```|~~~)")


class ListsAfterText(Preprocessor):
    """A list may start right under a line of text, as people type it in chat.

    Markdown wants a blank line first ("Two things:\n- a\n- b" would stay one
    paragraph); this adds it, outside fenced code.
    """

    def run(self, lines):
        out, fenced, previous = [], False, ""
        for line in lines:
            if FENCE.match(line):
                fenced = not fenced
            elif not fenced and LIST_ITEM.match(line) and _is_text(previous):
                out.append("")
            out.append(line)
            previous = line
        return out


def _is_text(line: str) -> bool:
    """A line of plain paragraph text (not blank, not a list item, not indented)."""
    return bool(line.strip()) and not LIST_ITEM.match(line) and not line.startswith((" ", "\t"))


class OffsiteImagesAsLinks(Treeprocessor):
    """An ``<img>`` whose ``src`` is not a same-site path becomes a link to that URL."""

    def run(self, root):
        for parent in root.iter():
            for index, child in enumerate(list(parent)):
                if child.tag != "img" or SAME_SITE_PATH.match(child.get("src", "")):
                    continue
                src = child.get("src", "")
                link = etree.Element("a", {"href": src})
                link.text = child.get("alt") or child.get("title") or src
                link.tail = child.tail
                parent.remove(child)
                parent.insert(index, link)


class ChatExtension(Extension):
    def extendMarkdown(self, md):  # noqa: N802
        # Raw HTML is text in a chat: the writer's "<b>" is shown, never parsed.
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        md.preprocessors.register(ListsAfterText(md), "lists_after_text", 25)
        md.inlinePatterns.register(Mentions(MENTION, md), "mention", 65)
        # After the inline patterns (20), so every <img> exists; before nothing else.
        md.treeprocessors.register(OffsiteImagesAsLinks(md), "offsite_images", 0)


_local = threading.local()


def _converter() -> markdown.Markdown:
    md = getattr(_local, "md", None)
    if md is None:
        md = _local.md = markdown.Markdown(
            extensions=[
                "fenced_code",
                "tables",
                "sane_lists",
                "nl2br",
                "pymdownx.magiclink",
                ChatExtension(),
            ],
            extension_configs={"pymdownx.magiclink": {"hide_protocol": False}},
        )
    return md


def chat_html(text: str, handles: Mapping[str, str] | None = None) -> str:
    """``text`` (Markdown) as clean HTML; ``handles`` maps known handles to agent ids."""
    return _cached_html(text, tuple(sorted((handles or {}).items())))


# Entries never change, and every page load renders the thread's chat again: the HTML of
# recent messages is kept (per text and set of known handles, so a new member's mentions
# still show).
@functools.lru_cache(maxsize=4096)
def _cached_html(text: str, handles: tuple[tuple[str, str], ...]) -> str:
    md = _converter()
    md.inlinePatterns["mention"].handles = dict(handles)
    try:
        return CLEANER.clean(md.convert(text))
    finally:
        md.reset()
