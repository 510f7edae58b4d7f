"""History windows: the thread page renders the newest window, older windows load by
stored position, a link opens the window around a message, the marks are repairable."""

import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from threads import windows
from threads.entries import (
    Chat,
    DispatchFinished,
    DispatchStarted,
    EntryDeleted,
    PiAssistant,
    Spend,
)
from threads.lifecycle import new_entry
from threads.models import EntryLocation, WindowMark
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)
N = windows.WINDOW_CHATS


def post(world, count, start=0, author=None):
    writer, out = stream_writer(), []
    for i in range(start, start + count):
        entry = new_entry(Chat(text=f"message number {i}"), author=author or world.owner.agent.id)
        writer.append(world.thread.stream_name, entry)
        out.append(entry)
    return out


def shown(html: str) -> list[int]:
    return [int(n) for n in re.findall(r"message number (\d+)", html)]


def older_key(html: str) -> str | None:
    m = re.search(r'id="older"[^>]*data-upto="([^"]+)"', html)
    return m.group(1) if m else None


def test_the_page_renders_the_newest_windows_and_older_ones_load_above(world):
    post(world, 5 * N + 7)
    marks = list(WindowMark.objects.filter(thread=world.thread).order_by("seq"))
    assert [m.chats for m in marks] == [N] * 5 + [7] and marks[-1].is_open
    client = world.client_for(world.member)
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    assert shown(html) == list(range(4 * N, 5 * N + 7))  # the last full window and the open one
    seen, key = shown(html), older_key(html)
    while key:
        part = client.get(f"/threads/{world.thread.id}/window", {"upto": key}).content.decode()
        seen = shown(part) + seen
        key = older_key(part)
        if not key:
            assert "start of the thread" in part
    assert seen == list(range(5 * N + 7))  # every message once, in order, nothing skipped


def test_an_older_window_leaves_out_chat_deleted_further_down_the_log(world):
    entries = post(world, 3 * N)
    target = entries[3]
    stream_writer().append(
        world.thread.stream_name,
        new_entry(EntryDeleted(entryId=target.id), author=world.owner.agent.id),
    )
    client = world.client_for(world.owner)
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    seen, key = [], older_key(html)
    while key:
        part = client.get(f"/threads/{world.thread.id}/window", {"upto": key}).content.decode()
        seen, key = shown(part) + seen, older_key(part)
    assert 3 not in seen and seen == [n for n in range(2 * N) if n != 3]


def test_a_link_opens_the_windows_around_the_message_with_a_gap_below(world):
    entries = post(world, 8 * N)
    client = world.client_for(world.member)
    target = entries[2 * N + 5]
    html = client.get(f"/threads/{world.thread.id}/", {"around": target.id}).content.decode()
    numbers = shown(html)
    assert 2 * N + 5 in numbers and f'id="entry-{target.id}"' in html
    assert numbers == list(range(N, 3 * N)) + list(range(7 * N, 8 * N))
    gap = re.search(r'id="newer" [^>]*data-after="([^"]+)" data-until="([^"]+)"', html)
    seen = []
    after, until = gap.groups()
    while after:
        part = client.get(
            f"/threads/{world.thread.id}/window", {"after": after, "until": until}
        ).content.decode()
        seen += shown(part)
        more = re.search(r'id="newer" [^>]*data-after="([^"]+)"', part)
        after = more.group(1) if more else None
    assert seen == list(range(3 * N, 7 * N))  # the gap fills exactly
    # A message on the newest part needs nothing around it.
    near = client.get(f"/threads/{world.thread.id}/", {"around": entries[-1].id})
    assert shown(near.content.decode()) == list(range(7 * N, 8 * N))


def test_a_window_before_a_chat_reads_from_its_window_start(world):
    entries = post(world, 3 * N)
    client = world.client_for(world.member)
    part = client.get(f"/threads/{world.thread.id}/window", {"before": entries[N + 4].id})
    assert shown(part.content.decode()) == list(range(N, N + 4))
    assert older_key(part.content.decode())


def test_replies_across_a_window_end_keep_their_transcript_and_spend(world):
    bot, writer = world.bot.id, stream_writer()
    post(world, N - 1)
    writer.append(
        world.thread.stream_name,
        new_entry(DispatchStarted(dispatchId="dx", agentId=bot, entryIds=[]), author=bot),
    )
    post(world, 1, start=N - 1)  # closes window 1 with the reply open
    thought = {"content": [{"type": "text", "text": "thinking it over"}]}
    writer.append(
        world.thread.stream_name,
        new_entry(PiAssistant(dispatchId="dx", message=thought), author=bot),
    )
    writer.append(world.thread.stream_name, new_entry(Chat(text="the answer"), author=bot))
    writer.append(
        world.thread.stream_name,
        new_entry(DispatchFinished(dispatchId="dx", spend=Spend(totalTokens=77)), author=bot),
    )
    post(world, N + 5, start=N)
    client = world.client_for(world.member)
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    # The newest part holds the answer but not a transcript of a reply it does not show.
    assert "the answer" in html and "thinking it over" not in html
    assert 'id="thread-total" data-tokens="77"' in html
    part = client.get(f"/threads/{world.thread.id}/window", {"upto": older_key(html)})
    part = part.content.decode()
    assert 'id="entry-' in part and 'data-dispatch="dx"' in part
    assert "thinking it over" in part, part[part.index("data-dispatch") - 100 :][:1500]
    assert "77 tokens" in part  # the reply completed
    post(world, 3 * N, start=2 * N + 5)  # the spend is now before the newest part
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    assert "the answer" not in html and 'id="thread-total" data-tokens="77"' in html


def test_reindex_rebuilds_marks_that_read_the_same_windows(world, settings):
    if settings.DURABLE_STREAMS_URL:
        # A rebuild can close a window only where the server reports an offset; the
        # reference server sends a whole catch-up as one SSE event (docs/history.md).
        pytest.skip("window sizes after a rebuild follow the embedded server's SSE events")
    post(world, 4 * N + 3)
    WindowMark.objects.all().delete()
    EntryLocation.objects.all().update(window=0)
    call_command("reindex_entries", "--thread", world.thread.id, stdout=None, stderr=None)
    marks = list(WindowMark.objects.filter(thread=world.thread).order_by("seq"))
    assert [m.chats for m in marks][:4] == [N] * 4 and marks[-1].is_open
    assert not EntryLocation.objects.filter(thread=world.thread, window=0).exists()
    client = world.client_for(world.member)
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    seen, key = shown(html), older_key(html)
    while key:
        part = client.get(f"/threads/{world.thread.id}/window", {"upto": key}).content.decode()
        seen, key = shown(part) + seen, older_key(part)
    assert seen == list(range(4 * N + 3))
    post(world, N, start=4 * N + 3)  # the seam carries on from the rebuilt open window
    assert WindowMark.objects.filter(thread=world.thread).exclude(offset="").count() == 5


def test_window_queries_are_bounded_and_flat_in_depth(world):
    post(world, 6 * N)
    client = world.client_for(world.member)
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    with CaptureQueriesContext(connection) as page:
        client.get(f"/threads/{world.thread.id}/")
    counts, key = [], older_key(html)
    while key:
        with CaptureQueriesContext(connection) as older:
            part = client.get(f"/threads/{world.thread.id}/window", {"upto": key})
        counts.append(len(older))
        key = older_key(part.content.decode())
    # 13: two of them say which bot answers without a mention (threads/bot_rules.py), one
    # finds the viewer's first unread message (the "New messages" divider), one reads the
    # viewer's notification setting for the thread (its bell). 6 more are the sidebar's
    # (houses/sidebar.py: a page of threads, reads, mentions, houses and their totals).
    assert len(page) <= 19, [q["sql"][:90] for q in page.captured_queries]
    assert len(counts) == 5 and max(counts) <= 9 and len(set(counts[:-1])) == 1


def test_strangers_and_unknown_positions_get_404(world):
    post(world, 2 * N)
    stranger = world.client_for(world.stranger)
    member = world.client_for(world.member)
    html = member.get(f"/threads/{world.thread.id}/").content.decode()
    url = f"/threads/{world.thread.id}/window"
    assert stranger.get(url, {"upto": "x"}).status_code == 404
    assert member.get(url, {"upto": "no-such-entry"}).status_code == 404
    assert member.get(url).status_code == 404
    assert "Traceback" not in html


def test_a_fuller_open_window_is_the_page_and_links_before_it_open_around(world):
    entries = post(world, 4 * N + N // 2 + 2)
    client = world.client_for(world.member)
    html = client.get(f"/threads/{world.thread.id}/").content.decode()
    assert shown(html) == list(range(4 * N, 4 * N + N // 2 + 2))  # the open window alone
    target = entries[4 * N - 3]  # in the last full window, just above the page
    linked = client.get(f"/threads/{world.thread.id}/", {"around": target.id}).content.decode()
    assert shown(linked) == list(range(2 * N, 4 * N)) + list(range(4 * N, 4 * N + N // 2 + 2))
    assert 'id="newer"' not in linked  # nothing between the linked windows and the newest
