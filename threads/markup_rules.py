"""The chat's own passes over markdown-it tokens (``threads.markup`` registers them).

Each pass is one walk over the inline tokens and regular expressions that run in
linear time (no nested quantifier can match the same text two ways), so none of
them can undo the parser's time bound.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import unquote

import mdurl
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

# A path on this site: one leading slash, no "//host" or "/\host", plain characters.
SAME_SITE_PATH = re.compile(r"^/(?![/\\])[A-Za-z0-9/_.\-~%]*$")
# "@handle" at the start or after a space or opening punctuation, never inside a word
# or an address (handles: houses.models.HANDLE_PATTERN).
MENTION = re.compile(r"(?<![\w@./-])@([a-z0-9][a-z0-9_-]{0,31})\b")
# A bare URL as typed: with its scheme or starting "www."; "example.com" or "notes.md"
# in a sentence stays text. An address, its local part bounded so a long word without
# "@" costs one bounded try from its start.
URL = r"(?<![\w/.@:+-])(?:https?://|www\.)[\w\[][^\s<>\"'`]*"
EMAIL = r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+"
LINKABLE = re.compile(f"(?P<url>{URL})|(?P<email>{EMAIL})", re.IGNORECASE)
TRAILING = set(".,:;!?*_~'\"")
# A link keeps its href only with one of these schemes, or none (a path on this site).
SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.IGNORECASE)
ALLOWED_SCHEMES = {"http", "https", "mailto"}


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _link(attrs: dict, label: str) -> list[Token]:
    opening = Token("link_open", "a", 1)
    opening.attrs = attrs
    return [opening, _text(label), Token("link_close", "a", -1)]


def _inline_blocks(state: StateCore) -> Iterable[Token]:
    return (t for t in state.tokens if t.type == "inline" and t.children)


def _rewrite_text(
    state: StateCore, wants: Callable[[str], bool], rewrite: Callable[[str], list[Token]]
) -> None:
    """Each text token that ``wants``, outside any link, replaced by ``rewrite(text)``."""
    for block in _inline_blocks(state):
        if not wants(block.content):
            continue
        out: list[Token] = []
        in_link = 0
        for token in block.children:
            in_link += {"link_open": 1, "link_close": -1}.get(token.type, 0)
            if token.type == "text" and not in_link and wants(token.content):
                out.extend(rewrite(token.content))
            else:
                out.append(token)
        block.children = out


def _split(text: str, pattern: re.Pattern, link: Callable[[re.Match], list[Token] | None]):
    out, at = [], 0
    for m in pattern.finditer(text):
        made = link(m)
        if made is None:
            continue
        if m.start() > at:
            out.append(_text(text[at : m.start()]))
        out += made
        at = m.start() + len(made[1].content)  # what the link shows (trimmed) was consumed
    if at < len(text):
        out.append(_text(text[at:]))
    return out


def autolinks(state: StateCore) -> None:
    """Bare URLs and addresses in text become links (``<https://…>`` is the parser's)."""
    md = state.md

    def link(m: re.Match) -> list[Token] | None:
        typed = _trim(m.group()) if m.group("url") else m.group()
        if m.group("email"):
            href = "mailto:" + typed
        else:
            href = typed if "://" in typed else "http://" + typed
        # markdown-it's normalizeLink parses the URL and punycodes its host (10 µs a link);
        # percent-encoding is all an ASCII one needs.
        href = mdurl.encode(href) if href.isascii() else md.normalizeLink(href)
        return _link({"href": href}, typed) if allowed_url(href) else None

    _rewrite_text(state, _may_link, lambda text: _split(text, LINKABLE, link))


def _may_link(text: str) -> bool:
    return "://" in text or "@" in text or "www." in text.lower()


def _trim(url: str) -> str:
    """A URL's trailing punctuation is the sentence's; so is a ")" it didn't open."""
    opened, closed, end = url.count("("), url.count(")"), len(url)
    while end:
        last = url[end - 1]
        if last in TRAILING:
            end -= 1
        elif last == ")" and closed > opened:
            closed, end = closed - 1, end - 1
        else:
            break
    return url[:end]


def mentions(state: StateCore) -> None:
    """``@handle`` of someone in the house -> ``<a class="mention" data-agent="ID">``,
    outside links and code (code spans are not text tokens)."""
    handles: Mapping[str, str] = state.env["handles"]
    if not handles:
        return

    def link(m: re.Match) -> list[Token] | None:
        agent_id = handles.get(m.group(1))
        if agent_id is None:
            return None
        return _link({"class": "mention", "data-agent": agent_id}, m.group())

    _rewrite_text(state, lambda text: "@" in text, lambda text: _split(text, MENTION, link))


def offsite_images(state: StateCore) -> None:
    """An image whose ``src`` is not a same-site path becomes a link to that URL."""
    for block in _inline_blocks(state):
        out: list[Token] = []
        for token in block.children:
            if token.type != "image":
                out.append(token)
                continue
            src = str(token.attrGet("src") or "")
            if _same_site(src):
                token.attrs = {"alt": "", **token.attrs}  # alt first, as it always was
                out.append(token)
                continue
            label = token.content or str(token.attrGet("title") or "") or src
            out += _link({"href": src}, label)
        block.children = out


def _same_site(src: str) -> bool:
    # The parser percent-encodes ("/\host" arrives as "/%5Chost"): judge both forms.
    return bool(SAME_SITE_PATH.match(src) and SAME_SITE_PATH.match(unquote(src)))


def allowed_url(url: str) -> bool:
    scheme = SCHEME.match(url)
    return scheme is None or scheme.group(1).lower() in ALLOWED_SCHEMES


def unsafe_links(state: StateCore) -> None:
    """A link to any other scheme (``javascript:``, ``data:``, …) keeps its text and loses its
    href. This is the rule; nh3's scheme list is the backstop."""
    for block in _inline_blocks(state):
        for token in block.children:
            if token.type == "link_open" and not allowed_url(str(token.attrGet("href") or "")):
                del token.attrs["href"]


def table_align(state: StateCore) -> None:
    """``style="text-align:right"`` -> ``align="right"`` (nh3 keeps no ``style``)."""
    for token in state.tokens:
        style = token.attrGet("style") if token.type in ("th_open", "td_open") else None
        if isinstance(style, str) and style.startswith("text-align:"):
            token.attrs = {"align": style.removeprefix("text-align:")}
