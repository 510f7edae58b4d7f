"""``arbe thread now --follow`` and ``arbe thread entries read`` on real replies and runs."""

import io
import json
import threading

import pytest

from tests.integration.test_cli import Ran, Terminal, offset_in, wait_for
from threads.models import Thread

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


class Screen(io.StringIO):
    """A stdout the test can read while the command writes to it."""


def in_background(arbe, *argv, cancel=None):
    screen, ran = Screen(), []
    worker = threading.Thread(target=lambda: ran.append(arbe(*argv, cancel=cancel, stdout=screen)))
    worker.start()
    return worker, screen, ran


def test_entries_read_follows_a_whole_reply_and_exits_when_it_ends(live):
    arbe = Terminal(live.world.member)
    thread = live.world.thread.id
    gate = live.fake.hold()  # the first model call waits until the reader is following
    posted = arbe("post", thread, "@helper TWOTOOLS please").out.strip()
    worker, screen, ran = in_background(arbe, "thread", "entries", "read", thread)
    wait_for(lambda: "@helper is replying" in screen.getvalue())
    assert worker.is_alive()
    gate.release()
    worker.join(120)  # it ends by itself when the reply has ended
    assert not worker.is_alive() and ran[0].code == 0
    out = ran[0].out
    assert f"[{posted}]" in out
    assert "@helper is replying" in out
    assert "Helper: Tool said: round-2" in out  # the answer, after both tool rounds
    assert live.now()["status"]["state"] == "done"
    # Resume: only what came after the printed offset.
    resume = offset_in(ran[0].err)
    again = arbe("post", thread, "@helper hello").out.strip()
    later = arbe("thread", "entries", "read", thread, "--from", resume)
    assert later.code == 0
    assert f"[{again}]" in later.out and "Helper: Hello from fake LLM!" in later.out
    assert f"[{posted}]" not in later.out and "round-2" not in later.out
    quiet = arbe("thread", "entries", "read", thread, "--from", offset_in(later.err))
    assert (quiet.code, quiet.out) == (0, "")


def test_entries_read_hides_deleted_chat_unless_raw(live):
    author, owner = Terminal(live.world.author), Terminal(live.world.owner)
    thread = live.world.thread.id
    author("post", thread, "--id", "oops-2", "oops")
    assert owner("delete", thread, "oops-2").code == 0
    live.settle()
    assert "[oops-2]" not in author("thread", "entries", "read", thread).out
    assert "[oops-2]" in author("thread", "entries", "read", thread, "--raw").out


def test_now_follow_folds_a_reply_as_it_happens_and_stops_on_ctrl_c(live):
    arbe = Terminal(live.world.member)
    thread = live.world.thread.id
    gate = live.fake.hold()  # the first model call waits: the reply is mid-flight
    cancel = threading.Event()
    worker, screen, ran = in_background(arbe, "thread", "now", thread, "--follow", cancel=cancel)
    wait_for(lambda: screen.getvalue().startswith("idle"))
    arbe("post", thread, "@helper USETOOL please")
    wait_for(lambda: "replying: @helper" in screen.getvalue())
    gate.release()
    live.settle()
    wait_for(lambda: screen.getvalue().split("\n\n")[-1].startswith("replied"))
    shown = screen.getvalue()
    assert "1 message waiting" in shown  # the mention, before the director took it
    assert "Helper is" in shown and live.world.bot.id not in shown  # names, never ids
    assert "tool calls: bash" in shown  # the open call, until its result
    final = shown.split("\n\n")[-1]
    assert "replying" not in final and "tool calls" not in final
    # The followed view is the server's view.
    body = live.now()
    assert f"last reply: {body['now']['spend']['totalTokens']:,} tokens" in final
    assert f"thread total: {body['total']['totalTokens']:,} tokens" in final
    cancel.set()  # what Ctrl-C does
    worker.join(10)  # a guard against a hang, not a timing check
    assert not worker.is_alive() and ran[0].code == 0 and "offset: " in ran[0].err


def test_a_coding_run_is_followed_on_its_child_thread(live):
    arbe = Terminal(live.world.member)
    started = arbe("run", live.world.thread.id, "@helper", "USETOOL and report")
    child = started.out.strip()
    assert Thread.objects.get(pk=child).parent_id == live.world.thread.pk
    worker, screen, ran = in_background(arbe, "thread", "entries", "read", child)
    worker.join(120)
    assert not worker.is_alive() and ran[0].code == 0
    assert "Helper:" in ran[0].out and "pi-tool-ok" in ran[0].out  # the run's report
    assert arbe("thread", "now", child).out.startswith("replied")
    raw = arbe("thread", "entries", "read", child, "--json").out
    states = [
        json.loads(line)["payload"].get("state")
        for line in raw.splitlines()
        if '"signal.thread.run_state"' in line
    ]
    assert states == ["claimed", "running", "finished"]


def test_the_short_commands_stay(live):
    arbe = Terminal(live.world.member)
    short, long = arbe("now", live.world.thread.id), arbe("thread", "now", live.world.thread.id)
    assert short.code == long.code == 0 and short.out == long.out
    assert isinstance(short, Ran)
