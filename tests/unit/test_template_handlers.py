"""No template carries script the CSP would block: no inline event handlers (``on*=``,
htmx's ``hx-on``), no ``javascript:`` URLs, no ``<script>`` without the page's nonce.

A blocked handler fails silently in the browser (a revoke with no confirmation), so every
file under templates/ is parsed here instead."""

from html.parser import HTMLParser
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "poster"}
DATA_SCRIPTS = {"application/json", "application/ld+json"}  # never executed


class Findings(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        line = self.getpos()[0]
        for name, value in attrs:
            value = value or ""
            if name.startswith("on") or name.startswith("hx-on"):
                self.problems.append(f"line {line}: <{tag}> has an inline handler {name}=")
            if name in URL_ATTRIBUTES and value.strip().lower().startswith("javascript:"):
                self.problems.append(f"line {line}: <{tag} {name}> is a javascript: URL")
        if tag == "script":
            names = dict(attrs)
            if names.get("type") not in DATA_SCRIPTS and "nonce" not in names:
                self.problems.append(f"line {line}: <script> without the nonce")

    handle_startendtag = handle_starttag


def problems_in(text: str) -> list[str]:
    parser = Findings()
    parser.feed(text)
    parser.close()
    return parser.problems


TEMPLATE_FILES = sorted(p for p in TEMPLATES.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_no_template_has_inline_script_the_csp_blocks(path):
    assert problems_in(path.read_text()) == []


def test_the_check_finds_each_kind_of_inline_script():
    found = problems_in(
        '<form onsubmit="return confirm(1)"><a href=" JavaScript:go()">x</a>'
        '<script src="/a.js"></script><script nonce="{{ csp_nonce }}"></script>'
        '<script type="application/json">{}</script><button hx-on:click="x()"></button>'
        '<img onerror="x()"/></form>'
    )
    assert len(found) == 5, found
    assert any("onsubmit" in p for p in found) and any("javascript:" in p for p in found)
