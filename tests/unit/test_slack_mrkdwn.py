"""Slack mrkdwn to Markdown: the conversions the import promises (docs/data.md), and a
bounded cost on hostile text at twice the chat limit (what the importer converts)."""

import time

from hypothesis import example, given, settings
from hypothesis import strategies as st

from archives.slack.mrkdwn import to_markdown
from threads.entries import MAX_CHAT_CHARS

HANDLES = {"U1": "alice", "U2": "bob"}
CHANNELS = {"C1": "general"}
BUDGET_NS = 100_000_000  # 100 ms of this thread's CPU for one message


def md(text: str) -> str:
    return to_markdown(text, HANDLES, CHANNELS)


def test_mentions_channels_and_specials():
    assert md("hi <@U1> and <@U9|someone>") == "hi @alice and @someone"
    assert md("see <#C1|general> or <#C7|elsewhere>") == "see #general or #elsewhere"
    assert (
        md("<!here> <!channel> <!everyone> <!subteam^S1|@devs>") == "@here @channel @everyone @devs"
    )


def test_links_and_escapes():
    assert (
        md("<https://a.example/x?y=1&amp;z=2|the doc>") == "[the doc](https://a.example/x?y=1&z=2)"
    )
    assert md("<https://a.example/>") == "https://a.example/"
    assert md("<mailto:a@b.example|a@b.example>") == "a@b.example"
    assert md("1 &lt; 2 &amp;&amp; 3 &gt; 2") == "1 < 2 && 3 > 2"


def test_emphasis_outside_code_only():
    assert md("*bold* _it_ ~gone~") == "**bold** _it_ ~~gone~~"
    assert md("`*not bold*` and *bold*") == "`*not bold*` and **bold**"
    assert md("```\n*kept* <@U1>\n```") == "```\n*kept* <@U1>\n```"
    assert md("2*3*4 stays") == "2*3*4 stays"
    assert md("> quoted *line*") == "> quoted **line**"


PIECES = [
    "<",
    ">",
    "<@",
    "<#",
    "<!",
    "|",
    "*",
    "~",
    "_",
    "`",
    "```",
    "&lt;",
    "&amp;",
    "\n",
    " ",
    "a",
    "http://x",
]


def hostile(parts) -> str:
    text = "".join(piece * count for piece, count in parts)
    return (text * (2 * MAX_CHAT_CHARS // max(len(text), 1) + 1))[: 2 * MAX_CHAT_CHARS]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PIECES), st.integers(1, 5000)), min_size=1, max_size=5))
@example([("<", 1)])
@example([("*", 1), ("a", 1)])
@example([("<@", 1), ("|", 1)])
@example([("`", 1), ("*", 3)])
def test_conversion_is_bounded(parts):
    text = hostile(parts)
    started = time.thread_time_ns()
    to_markdown(text, HANDLES, CHANNELS)
    assert time.thread_time_ns() - started < BUDGET_NS
