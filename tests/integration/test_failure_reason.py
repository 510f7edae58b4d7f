"""After a failed reply, every surface says why nobody speaks: the failure (issue 32)."""

import re

import pytest

from dispatch.director import director_pass
from tests.integration.test_cli import Terminal
from threads import entries as E
from threads.lifecycle import new_entry
from threads.models import Thread
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)
REASON = "The last attempt failed: HTTP 529: overloaded"


@pytest.fixture
def failed(world):
    """A mention, a reply that failed for good, and the director's closing pass."""

    def append(payload):
        entry = new_entry(payload)
        stream_writer().append(world.thread.stream_name, entry)
        return entry.id

    bot = world.bot.id
    asked = Terminal(world.member)("post", world.thread.id, "@helper hi").out.strip()
    append(E.DirectorDecided(picked=[bot], upTo=asked, entryIds=[asked]))
    append(E.DispatchStarted(dispatchId="d1", agentId=bot, entryIds=[asked]))
    append(E.DispatchFailed(dispatchId="d1", stage="model", error="HTTP 529: overloaded"))
    director_pass(world.thread.id)
    outcomes = [p for p in payloads(world) if isinstance(p, E.DirectorOutcome)]
    assert [o.reason for o in outcomes] == [None]  # the closing pass has no reason of its own
    return world


def payloads(world):
    from threads.reading import read_entries

    return [e.payload for e in read_entries(world.thread.id)[0]]


def test_now_says_the_failure(failed):
    body = failed.client_for(failed.member).get(f"/api/threads/{failed.thread.id}/now").json()
    assert body["now"]["silence"] == REASON
    assert (body["status"]["state"], body["status"]["message"]) == ("error", REASON)


def test_the_stored_record_and_the_house_list_say_the_failure(failed):
    thread = Thread.objects.get(pk=failed.thread.pk)
    assert (thread.status, thread.status_message) == ("error", REASON)
    page = failed.client_for(failed.member).get(f"/houses/{failed.house.slug}/").content.decode()
    row = re.search(rf'<li id="thread-{failed.thread.id}".*?</li>', page, re.S).group()
    assert REASON in row


def test_the_thread_page_says_the_failure(failed):
    page = failed.client_for(failed.member).get(f"/threads/{failed.thread.id}/").content.decode()
    now = re.search(r'<div id="now".*?</div>', page, re.S).group()
    assert f'<p class="why">{REASON}</p>' in now


def test_the_cli_says_the_failure(failed):
    ran = Terminal(failed.member)("now", failed.thread.id)
    lines = ran.out.splitlines()
    assert lines[0] == f"error: {REASON}"
    assert f"  nobody speaks: {REASON}" in lines


def test_a_waiting_mention_reads_working_on_the_page_the_house_list_and_the_cli(world):
    """The director hasn't passed over it yet (its wake is recorded, nothing runs)."""
    Terminal(world.member)("post", world.thread.id, "@helper are you there?")
    thread = Thread.objects.get(pk=world.thread.pk)
    deciding = "Deciding who answers 1 waiting message."
    assert (thread.status, thread.status_message) == ("working", deciding)
    client = world.client_for(world.member)
    page = client.get(f"/threads/{world.thread.id}/").content.decode()
    now = re.search(r'<div id="now".*?</div>', page, re.S).group()
    assert f'<p class="working">{deciding}</p>' in now and "Nobody is working" not in now
    line = re.search(r'<summary id="now-line".*?</summary>', page, re.S).group()
    assert "status-working" in line and deciding in line
    house = client.get(f"/houses/{world.house.slug}/").content.decode()
    row = re.search(rf'<li id="thread-{world.thread.id}".*?</li>', house, re.S).group()
    assert deciding in row and "status-working" in row
    assert Terminal(world.member)("now", world.thread.id).out.splitlines()[0] == (
        f"working: {deciding}"
    )
