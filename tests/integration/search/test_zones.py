"""Days in a search are the viewer's: ``today``, ``yesterday``, ``after:``/``before:`` in the
zone the page (cookie), the API (``tz``) or the ``arbe`` command (its machine's zone) says."""

import time
from zoneinfo import ZoneInfo

import pytest

from cli.client import local_zone
from search.query import day_start_ms, today_in
from tests.integration.search.test_api import ids, say, search

pytestmark = pytest.mark.django_db(transaction=True)

AHEAD = "Pacific/Kiritimati"  # UTC+14: its day starts 14 hours before UTC's


@pytest.fixture
def around_midnight(world):
    """One message just before the viewer's day began, one just after (in ``AHEAD``)."""
    start = day_start_ms(today_in(ZoneInfo(AHEAD)), ZoneInfo(AHEAD))
    now = time.time_ns() // 1_000_000
    return {
        "yesterday": say(world.thread, world.author.agent, "standup notes", ts=start - 60_000),
        "today": say(world.thread, world.author.agent, "standup notes", ts=min(start + 1, now)),
    }


def test_today_and_yesterday_are_the_viewers_days(world, around_midnight):
    client = world.token_client(world.member)
    today, yesterday = around_midnight["today"], around_midnight["yesterday"]
    assert ids(search(client, "standup after:yesterday", tz=AHEAD)) == [today]
    assert ids(search(client, "standup before:today", tz=AHEAD)) == [yesterday]
    # Alone too: a search of nothing but a day.
    assert ids(search(client, "after:yesterday", tz=AHEAD)) == [today]


def test_the_page_learns_the_zone_from_its_cookie(world, around_midnight):
    client = world.client_for(world.member)
    client.cookies["tz"] = AHEAD
    html = client.get("/search/", {"q": "standup after:yesterday"}).content.decode()
    assert around_midnight["today"] in html and around_midnight["yesterday"] not in html
    client.cookies["tz"] = "Not/A_Zone"  # a cookie that isn't a zone is ignored: UTC
    assert client.get("/search/", {"q": "standup"}).status_code == 200


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../../etc/passwd", "x" * 80, "Europe/"])
def test_a_zone_that_isnt_one_is_a_400_never_a_500(world, zone):
    answer = search(world.token_client(world.member), "standup", status=400, tz=zone)
    assert answer["error"].startswith("tz:")
    page = world.client_for(world.member).get("/search/", {"q": "standup", "tz": zone})
    assert page.status_code == 400 and "is not a time zone" in page.content.decode()


def test_the_command_sends_its_machines_zone():
    assert local_zone({"TZ": AHEAD}) == AHEAD
    assert local_zone({"TZ": ":Europe/Paris"}) == "Europe/Paris"
    assert local_zone({"TZ": "EST5EDT,M3.2.0,M11.1.0"}) == "UTC"  # a POSIX rule: no IANA name


def test_the_command_searches_in_its_machines_day(world, around_midnight, monkeypatch):
    from tests.integration.test_cli import Terminal

    monkeypatch.setattr("cli.client.local_zone", lambda environ: AHEAD)
    out = Terminal(world.member)("search", "standup after:yesterday").out
    assert around_midnight["today"] in out and around_midnight["yesterday"] not in out
