"""Presence and typing across two Daphne processes, in Chromium (issue 26's acceptance).

Two people on the scaled configuration (``tests.peers.cluster``: PostgreSQL, Redis, the
reference stream server, two Daphnes, no worker): one reads the thread through web 1, the
other through web 2. Who is here and who is typing cross the processes over the Redis channel
layer only, never the log; a tab that closes leaves within seconds. ``make test-cluster`` runs
this module in its own pytest process (browser tests never share one with async tests).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.peers.cluster import Cluster

pytestmark = pytest.mark.faults
WAIT = 20_000  # ms: a hang guard, not a speed bound


@pytest.fixture(scope="module")
def cluster():
    with Cluster(web=2, workers=0) as cluster:
        yield cluster


def thread_page(browser, cluster, world, person: int):
    """``person``'s own browser on their own Daphne (person n on web n+1)."""
    url = cluster.web[person].url
    context = browser.new_context(base_url=url, viewport={"width": 1280, "height": 800})
    context.add_cookies([{"name": "sessionid", "value": world["sessions"][person], "url": url}])
    page = context.new_page()
    response = page.goto(f"/threads/{world['threads'][0]}/")
    assert response.status == 200
    expect(page.locator("#live[data-connected]")).to_have_count(1, timeout=WAIT)
    return page


def test_who_is_here_and_who_is_typing_cross_processes(browser, cluster):
    world = cluster.world(people=2, bot=False)
    first, second = (thread_page(browser, cluster, world, n) for n in (0, 1))
    for page in (first, second):
        expect(page.locator("#here .avatar")).to_have_count(2, timeout=WAIT)
    typist = world["usernames"][0]
    first.locator("#compose textarea").press_sequentially("on my w", delay=30)
    expect(second.locator("#typing")).to_have_text(f"{typist} is typing…", timeout=WAIT)
    expect(first.locator("#typing")).to_have_text("")  # never one's own
    first.locator("#compose textarea").press_sequentially("ay")
    first.locator("#compose textarea").press("Enter")
    expect(second.locator("#entries")).to_contain_text("on my way", timeout=WAIT)
    expect(second.locator("#typing")).to_have_text("")
    first.context.close()  # the tab on web 1 goes: its avatar leaves the page on web 2
    expect(second.locator("#here .avatar")).to_have_count(1, timeout=WAIT)
    # Ephemeral: nothing of it reached the thread's log.
    log = cluster.manage(
        "shell",
        "-c",
        "from threads.reading import read_entries; "
        f"print(sorted({{e.type for e in read_entries('{world['threads'][0]}')[0]}}))",
    )
    assert "typing" not in log and "presence" not in log and "'chat'" in log, log
    second.context.close()
