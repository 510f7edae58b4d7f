"""The ``arbe`` command against the app's real routes (in-process, through the ASGI app)."""

import io
import threading
import time
from dataclasses import dataclass

import pytest

from arbe_site.asgi import application
from cli.main import main
from houses.models import ApiToken
from streams.transport import ASGITransport, SyncBridgeTransport

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class Ran:
    code: int
    out: str
    err: str


class Terminal:
    """Runs ``arbe`` as one person, with their token in the environment."""

    def __init__(self, user=None, token: str | None = None):
        self.token = token if token is not None else ApiToken.issue(user, "cli tests")[1]

    def __call__(self, *argv: str, stdin: str = "", cancel=None, stdout=None) -> Ran:
        out, err = stdout or io.StringIO(), io.StringIO()
        code = main(
            list(argv),
            transports=lambda: SyncBridgeTransport(ASGITransport(application)),
            environ={"ARBE_URL": "http://testserver", "ARBE_TOKEN": self.token},
            stdin=io.StringIO(stdin),
            stdout=out,
            stderr=err,
            cancel=cancel,
        )
        return Ran(code, out.getvalue(), err.getvalue())


def offset_in(err: str) -> str:
    return err.split("offset: ", 1)[1].split()[0]


def test_start_a_thread_post_and_read_it_back(world):
    arbe = Terminal(world.member)
    assert "h  idle" in arbe("houses").out
    thread_id = arbe("new", "h", "Release", "notes").out.strip()
    assert thread_id in arbe("threads", "h").out
    posted = arbe("post", thread_id, "hello", "there")
    assert posted.code == 0
    read = arbe("read", thread_id)
    assert read.code == 0
    lines = read.out.splitlines()
    assert lines[0].endswith("· Thread started: Release notes")
    assert f"mia: hello there  [{posted.out.strip()}]" in lines[1]


def test_post_reads_stdin_and_a_retry_with_an_id_posts_once(world):
    arbe = Terminal(world.member)
    first = arbe("post", world.thread.id, "--id", "cli-1", stdin="line one\nline two\n")
    again = arbe("post", world.thread.id, "--id", "cli-1", stdin="line one\nline two\n")
    assert first.out == again.out == "cli-1\n"
    out = arbe("read", world.thread.id).out
    assert out.count("[cli-1]") == 1
    assert "mia: line one\n      line two" in out


def test_follow_shows_new_entries_and_stops_with_an_offset_that_resumes_exactly(world):
    arbe = Terminal(world.member)
    cancel, screen = threading.Event(), io.StringIO()
    ran: list[Ran] = []
    follower = threading.Thread(
        target=lambda: ran.append(arbe("follow", world.thread.id, cancel=cancel, stdout=screen))
    )
    follower.start()
    wait_for(lambda: "Thread started: Plans" in screen.getvalue())
    arbe("post", world.thread.id, "--id", "live-1", "live")
    wait_for(lambda: "[live-1]" in screen.getvalue())
    cancel.set()
    follower.join(10)  # a guard against a hang, not a timing check
    assert not follower.is_alive() and ran[0].code == 0
    resume = offset_in(ran[0].err)
    arbe("post", world.thread.id, "--id", "after-1", "later")
    missed = arbe("read", world.thread.id, "--from", resume).out
    assert "[after-1]" in missed and "[live-1]" not in missed


def test_a_deleted_message_is_gone_from_read_and_its_tombstone_in_json(world):
    author, owner = Terminal(world.author), Terminal(world.owner)
    author("post", world.thread.id, "--id", "oops-1", "oops")
    assert owner("delete", world.thread.id, "oops-1").code == 0
    assert "[oops-1]" not in author("read", world.thread.id).out
    raw = author("read", world.thread.id, "--json").out
    assert '"type":"signal.entry.deleted"' in raw.replace(" ", "")
    assert Terminal(world.member)("delete", world.thread.id, "oops-1").code == 1


def test_edit_shows_the_latest_text_in_read_and_every_version_in_json(world):
    author = Terminal(world.author)
    author("post", world.thread.id, "--id", "typo-1", "teh plan")
    ran = author("edit", world.thread.id, "typo-1", "the plan")
    assert (ran.code, ran.out.strip()) == (0, "edited typo-1")
    out = Terminal(world.member)("read", world.thread.id).out
    assert "the plan (edited)  [typo-1]" in out and "teh plan" not in out
    raw = author("read", world.thread.id, "--json").out.replace(" ", "")
    assert '"text":"tehplan"' in raw and '"type":"signal.entry.edited"' in raw
    refused = Terminal(world.member)("edit", world.thread.id, "typo-1", "mine now")
    assert refused.code == 1 and "Only its author can edit a message." in refused.err


def test_now_prints_the_thread_state(world):
    arbe = Terminal(world.member)
    ran = arbe("now", world.thread.id)
    assert ran.code == 0
    assert ran.out.splitlines()[0].startswith("idle")
    assert "tokens" not in ran.out  # nothing spent: no figures, as on the page
    assert '"state": "idle"' in arbe("now", world.thread.id, "--json").out


def test_errors_are_plain_sentences_with_exit_code_1(world):
    missing = Terminal(token="")("houses")
    assert (missing.code, missing.out) == (1, "")
    assert "No API token. Make one at http://testserver/tokens/" in missing.err
    assert "refused the token" in Terminal(token="arbe_not-a-real-token")("houses").err
    stranger = Terminal(world.stranger)
    for argv in (("read", world.thread.id), ("post", world.thread.id, "hi"), ("now", "nope")):
        ran = stranger(*argv)
        assert ran.code == 1 and "not in a house you belong to" in ran.err, argv
    empty = Terminal(world.member)("post", world.thread.id, stdin="  \n")
    assert empty.code == 1 and "Nothing to post" in empty.err
    bad = Terminal(world.member)("read", world.thread.id, "--from", "not-an-offset")
    assert bad.code == 1 and "offset" in bad.err


def wait_for(check, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_threads_follows_the_list_cursor(world):
    from threads.models import Thread
    from threads.paging import PAGE

    Thread.objects.bulk_create(
        [
            Thread(house=world.house, title=f"many {i}", last_entry_ts=1_700_000_000_000 + i)
            for i in range(2 * PAGE + 3)
        ]
    )
    out = Terminal(world.member)("threads", "h").out
    assert out.count("many ") == 2 * PAGE + 3


def test_now_says_names_and_the_pages_spend_figures(world):
    """A reply running after one that cost 1,410 tokens: the status line names the bot (never
    its id), and the thread total is /now's figure under the page's label."""
    from threads import entries as E
    from threads.lifecycle import new_entry
    from threads.recency import stream_writer

    def append(payload):
        entry = new_entry(payload)
        stream_writer().append(world.thread.stream_name, entry)
        return entry.id

    arbe, bot = Terminal(world.member), world.bot.id
    asked = arbe("post", world.thread.id, "@helper hi").out.strip()
    append(E.DirectorDecided(picked=[bot], upTo=asked))
    append(E.DispatchStarted(dispatchId="d1", agentId=bot, entryIds=[asked]))
    append(E.DispatchFinished(dispatchId="d1", spend=E.Spend(totalTokens=1410, costUsd=0.0123)))
    again = arbe("post", world.thread.id, "@helper and again").out.strip()
    append(E.DirectorDecided(picked=[bot], upTo=again))
    append(E.DispatchStarted(dispatchId="d2", agentId=bot, entryIds=[again]))
    ran = arbe("now", world.thread.id)
    assert ran.out.splitlines()[0] == "working: Helper is thinking"
    assert bot not in ran.out
    body = Terminal(world.member)("now", world.thread.id, "--json").out
    import json

    total = json.loads(body)["total"]
    assert (total["totalTokens"], total["costUsd"]) == (1410, 0.0123)
    assert "  thread total: 1,410 tokens · $0.0123" in ran.out.splitlines()
    page = world.client_for(world.member).get(f"/threads/{world.thread.id}/").content.decode()
    assert "1,410 tokens · $0.0123" in page and "Thread total" in page


def test_threads_show_names_even_for_a_record_stored_with_an_id(world):
    from threads.models import Thread

    stored = {"status": "working", "status_message": f"{world.bot.id} is thinking"}
    Thread.objects.filter(pk=world.thread.pk).update(**stored)
    out = Terminal(world.member)("threads", "h").out
    assert "— @helper is thinking" in out and world.bot.id not in out


def test_inbox_lists_what_is_addressed_to_you_and_marks_it_read(world):
    mia, olive = Terminal(world.member), Terminal(world.owner)
    assert olive("inbox").err.strip() == "Nothing addressed to you yet."
    said = mia("post", world.other_thread.id, "@olive", "the", "numbers?").out.strip()
    mia("post", world.thread.id, "nothing for anyone")
    ran = olive("inbox")
    assert ran.code == 0 and ran.err.strip() == "1 unread."
    [line] = ran.out.splitlines()
    assert line.startswith("* ") and "h/Other  @mia mentioned you: @olive the numbers?" in line
    assert line.endswith(f"[{world.other_thread.id} {said}]")
    assert olive("inbox", "--mark-read").err.strip() == "Marked 1 read."
    assert olive("inbox").out.startswith("  ")  # listed, no longer marked unread
    assert olive("inbox", "--unread").err.strip() == "Nothing unread for you."
