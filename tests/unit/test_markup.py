"""Chat Markdown: raw HTML stays text, off-site images become links, links are safe."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from threads.markup import chat_html

HANDLES = {"helper": "ag_bot", "mia": "ag_mia"}


def test_raw_html_is_shown_as_text():
    html = chat_html("<b>hi</b> <script>alert(1)</script>\n\n<div onclick='x()'>block</div>")
    assert "<b>" not in html and "<script" not in html and "<div" not in html
    assert "&lt;b&gt;hi&lt;/b&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_markdown_renders_for_everyone():
    html = chat_html("**bold** and `code`\n\n- one\n- two")
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html
    assert html.count("<li>") == 2


def test_single_newlines_are_kept():
    assert "<br>" in chat_html("first\nsecond")


@pytest.mark.parametrize(
    "src",
    [
        "https://attacker.example/p.png?d=secret",
        "http://attacker.example/p.png",
        "//attacker.example/p.png",
        "/\\attacker.example/p.png",
        "data:image/png;base64,AAAA",
    ],
)
def test_off_site_images_become_links(src):
    html = chat_html(f"![the picture]({src})")
    assert "<img" not in html
    assert "the picture</a>" in html


def test_same_site_images_stay():
    html = chat_html("![logo](/static/arbe/logo.png)")
    assert '<img alt="logo" src="/static/arbe/logo.png">' in html


@pytest.mark.parametrize(
    "link", ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "vbscript:x", "data:text/html,x"]
)
def test_dangerous_link_schemes_are_stripped(link):
    html = chat_html(f"[click]({link})")
    assert "href" not in html and "click" in html


def test_bare_urls_are_linked_in_a_new_tab_with_noopener():
    html = chat_html("see https://example.com/a?b=1 and www.example.org")
    assert '<a href="https://example.com/a?b=1" target="_blank" rel="noopener noreferrer">' in html
    assert 'href="http://www.example.org"' in html


def test_known_handles_become_mentions_and_others_stay_text():
    html = chat_html("@helper, ask @mia, not @stranger or mia@example.com", HANDLES)
    assert 'class="mention" data-agent="ag_bot"' in html and ">@helper</a>" in html
    assert 'data-agent="ag_mia"' in html
    assert "@stranger" in html and "stranger</a>" not in html
    assert html.count('class="mention"') == 2


def test_mentions_in_code_stay_code():
    assert "mention" not in chat_html("`@helper`", HANDLES)


@given(st.text(max_size=300))
def test_no_text_makes_script_handlers_or_foreign_images(text):
    html = chat_html(text, HANDLES)
    assert not re.search(r"<(script|style|iframe|object)\b", html, re.I)
    assert not re.search(r"<[^>]*\son\w+\s*=", html, re.I)
    for src in re.findall(r'<img[^>]*src="([^"]*)"', html):
        assert src.startswith("/") and not src.startswith("//")


def test_a_list_may_start_right_under_a_line():
    html = chat_html("Two things:\n- the copy\n- the button\n\n```\nnot\n- a list\n```")
    assert "<p>Two things:</p>" in html and html.count("<li>") == 2
    assert "- a list" in html


def test_bare_links_keep_their_parentheses_and_leave_the_sentence_punctuation():
    html = chat_html("(see https://en.example.org/wiki/A_(b), or www.example.org.) notes.md")
    assert '<a href="https://en.example.org/wiki/A_(b)" target' in html
    assert '<a href="http://www.example.org" target' in html
    assert "notes.md</p>" in html  # a bare file name is not a link
    assert 'href="http://localhost:8000/x"' in chat_html("on http://localhost:8000/x now")


def test_tables_and_fenced_code():
    html = chat_html("| a | b |\n|---|--:|\n| 1 | 2 |\n\n```py\nx = '<b>'\n```")
    assert '<td align="right">2</td>' in html
    assert "<pre><code class=\"language-py\">x = '&lt;b&gt;'\n</code></pre>" in html


def test_a_link_to_a_disallowed_scheme_keeps_its_text():
    html = chat_html("[bad](javascript:alert(1)) and ![pic](data:image/png;base64,AAAA)")
    assert '<a target="_blank" rel="noopener noreferrer">bad</a>' in html
    assert '<a target="_blank" rel="noopener noreferrer">pic</a>' in html
    assert "href" not in html and "javascript" not in html
