"""The follow screen: redrawn in place on a terminal, plain blocks on a pipe."""

import io

from cli.live import Screen


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_is_redrawn_in_place_and_an_unchanged_view_not_at_all():
    stream = Terminal()
    screen = Screen(stream)
    screen.show(["working: ag_bot is thinking (round 0)", "  spend: 0 tokens · $0.0000"])
    screen.show(["working: ag_bot is thinking (round 0)", "  spend: 0 tokens · $0.0000"])
    screen.show(["done: Replied.", "  spend: 10 tokens · $0.0010"])
    out = stream.getvalue()
    assert out.count("\x1b[2F\x1b[J") == 1  # back up two rows, clear, draw
    assert out.endswith("done: Replied.\n  spend: 10 tokens · $0.0010\n")


def test_a_pipe_gets_each_new_view_as_plain_lines():
    stream = io.StringIO()
    screen = Screen(stream)
    screen.show(["working"])
    screen.show(["working"])
    screen.show(["done"])
    assert stream.getvalue() == "working\n\ndone\n"
