"""Rendering is bounded: hostile chat at the length limit renders in milliseconds.

Each render's cost is the thread's CPU time (``time.thread_time_ns``), not the wall
clock, so a loaded machine doesn't turn a fast render into a failure. Against the
Python-Markdown renderer this replaced, the first example alone ("[" * 20000) took
about 100 s (docs/security.md, "Rendering is bounded").
"""

import time

from hypothesis import example, given, settings
from hypothesis import strategies as st

from threads import markup
from threads.entries import MAX_CHAT_CHARS
from threads.markup import chat_html, plain_html

HANDLES = {"helper": "ag_bot", "mia": "ag_mia"}
BUDGET_NS = 50_000_000  # 50 ms of this thread's CPU for one message

# What the quadratic and deep paths of Markdown parsers feed on.
PIECES = [
    "[", "![", "](", "[](", "[a](", "]", "(", ")", ">", "> ", "*", "**a", "_", "a_", "`", "``a",
    "<", "<a", "- ", "  - ", "1. ", "\n", "\n\n", "\r", "- x\r", "|", "|-", "~~", "#", "\\", "&#",
    "&amp;",
    "www.", "www.a ", "http://a.b/", "a@b.co ", "@mia ", "@helper", ":", ".", "a", " ", '"', "'",
]  # fmt: skip


def at_the_limit(text: str) -> str:
    """``text`` repeated to exactly the chat's length limit."""
    return (text * (MAX_CHAT_CHARS // max(len(text), 1) + 1))[:MAX_CHAT_CHARS]


runs = st.lists(
    st.tuples(st.sampled_from(PIECES), st.integers(1, MAX_CHAT_CHARS)), min_size=1, max_size=6
).map(lambda parts: at_the_limit("".join(piece * count for piece, count in parts)))


@st.composite
def nested_lists(draw) -> str:
    """Lists and quotes nested as deep as the drawn depth, at the length limit."""
    depth = draw(st.integers(1, 60))
    marker = draw(st.sampled_from(["- ", "* ", "1. ", "> ", "- > ", "> - "]))
    body = draw(st.sampled_from(PIECES))
    lines = "".join(
        "  " * (i % depth) + marker * (1 + i % 3) + body * 3 + "\n" for i in range(depth)
    )
    return at_the_limit(lines)


def cpu_ns(text: str) -> int:
    markup._cached_html.cache_clear()
    start = time.thread_time_ns()
    chat_html(text, HANDLES)
    return time.thread_time_ns() - start


@settings(max_examples=150, deadline=None)
@given(st.one_of(runs, nested_lists()))
@example("[" * MAX_CHAT_CHARS)
@example("![" * (MAX_CHAT_CHARS // 2))
@example(at_the_limit("[]("))
@example(at_the_limit("> "))
@example(at_the_limit("- "))
@example(at_the_limit("[]( ")[:1200] + "a" * (MAX_CHAT_CHARS - 1200))
@example(at_the_limit("a.co "))
@example(at_the_limit("www.x "))
@example(at_the_limit("- x\n"))
@example(at_the_limit("- x\r"))
@example(at_the_limit("|x" * 60 + "|\n"))
def test_hostile_text_renders_within_budget(text):
    spent = cpu_ns(text)
    assert spent < BUDGET_NS, f"{spent / 1e6:.1f} ms for {text[:40]!r}…"


def test_refused_shapes_show_as_plain_text_with_their_line_breaks():
    text = "[" * 30 + "\n" + "[" * 5000 + "\n<b>"
    html = chat_html(text)
    assert html == plain_html(text)
    assert html.count("<br>") == 2 and "&lt;b&gt;" in html and "<b>" not in html
    assert chat_html("a\r" * 400).count("<br>") == 400  # "\r" ends a line for the parser too


def test_a_render_past_its_limit_is_plain_text_and_cached(monkeypatch):
    text = "**slow** today"
    markup._cached_html.cache_clear()
    monkeypatch.setattr(markup, "RENDER_LIMIT_NS", 0)
    assert chat_html(text) == plain_html(text)
    monkeypatch.setattr(markup, "RENDER_LIMIT_NS", 10**9)
    assert chat_html(text) == plain_html(text)  # the cached outcome: not tried again
    assert "<strong>slow</strong>" in markup.render(text, {})


def test_ordinary_long_chat_still_gets_markdown():
    """The budget leaves what people write alone: a long, busy message is still Markdown."""
    para = (
        "Hi @mia, the **deploy** of `web-2` failed at https://ci.example/run/7 (see [the log]"
        "(https://ci.example/log/7)); _retrying_ now.\n"
        "Two things:\n- check the ~~old~~ new config\n- ping @helper\n\n"
        "| step | time |\n|:-|-:|\n| build | 3m |\n\n```sh\nmake deploy | tee log\n```\n\n"
    )
    text = (para * 12)[:5000]
    html = chat_html(text, HANDLES)
    assert html != plain_html(text)
    assert html.count('class="mention"') >= 20 and "<li>" in html and "<table>" in html
    assert '<a href="https://ci.example/run/7" target="_blank" rel="noopener noreferrer">' in html
    assert '<th align="left">step</th>' in html and "<del>" not in html and "<s>old</s>" in html


def test_a_parser_failure_shows_the_message_as_plain_text(monkeypatch, caplog):
    def broken(*_args, **_kwargs):
        raise RecursionError("deep")

    monkeypatch.setattr(markup.MD, "parse", broken)
    assert markup.render("**still here**", {}) == plain_html("**still here**")
    assert "chat render failed" in caplog.text
