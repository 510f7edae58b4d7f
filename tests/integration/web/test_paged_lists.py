"""Thread lists a page at a time: the house page, its "more" rows, the list APIs, the CLI."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from houses.fragments import ROWS
from threads.models import Status, Thread

pytestmark = pytest.mark.django_db(transaction=True)


def many(world, n, ts0=1_700_000_000_000):
    """``n`` threads with distinct activity, plus ties on the same time (the id breaks them)."""
    states = list(Status.values)
    rows = [
        Thread(
            house=world.house,
            title=f"bulk {i:04d}",
            status=states[i % len(states)],
            last_entry_ts=ts0 + (i // 3) * 1000,  # three threads share each time
        )
        for i in range(n)
    ]
    Thread.objects.bulk_create(rows)
    return rows


def titles(html: str) -> list[str]:
    return re.findall(r'class="title" href="[^"]+">([^<]+)</a>', html)


def test_the_house_page_shows_a_page_and_loads_the_rest_on_scroll(world):
    many(world, 2 * ROWS + 7)
    client = world.client_for(world.member)
    html = client.get(f"/houses/{world.house.slug}/").content.decode()
    seen = titles(html)
    assert len(seen) == ROWS
    # The list's own "more" row (the sidebar beside it pages too, with a button).
    more = re.search(r'id="more-threads"[^>]*hx-get="([^"]+)"', html)
    while more:
        part = client.get(more.group(1).replace("&amp;", "&")).content.decode()
        seen += titles(part)
        more = re.search(r'id="more-threads"[^>]*hx-get="([^"]+)"', part)
    live = Thread.objects.filter(house=world.house, archived_at__isnull=True).count()
    assert len(seen) == live == len(set(seen))  # each once, none skipped on time ties
    times = dict(Thread.objects.values_list("title", "last_entry_ts"))
    order = [times[t] or 0 for t in seen]
    assert order == sorted(order, reverse=True)


def test_house_page_queries_do_not_grow_with_threads(world):
    client = world.client_for(world.member)
    many(world, 5)
    client.get(f"/houses/{world.house.slug}/")
    with CaptureQueriesContext(connection) as few:
        client.get(f"/houses/{world.house.slug}/")
    many(world, 300, ts0=1_800_000_000_000)
    with CaptureQueriesContext(connection) as lots:
        response = client.get(f"/houses/{world.house.slug}/")
    assert len(titles(response.content.decode())) == ROWS
    # session, user, membership and house, the page's facts (its T3 board, the unread total,
    # the top bar's name), threads with read positions, names; the sidebar's own (houses/sidebar.py)
    assert len(lots) == len(few) <= 12, [q["sql"][:80] for q in lots.captured_queries]


def test_the_list_apis_follow_a_cursor(world):
    many(world, 130)
    client = world.token_client(world.member)
    seen, cursor = [], None
    while True:
        params = {"limit": 40} | ({"cursor": cursor} if cursor else {})
        with CaptureQueriesContext(connection) as queries:
            body = client.get("/api/threads", params).json()
        assert len(queries) <= 6
        seen += [t["id"] for t in body["threads"]]
        cursor = body["next"]
        if not cursor:
            break
    mine = Thread.objects.filter(house__memberships__user=world.member)
    assert len(seen) == len(set(seen)) == mine.count()
    house, cursor, in_house = None, None, []
    while True:
        params = {"limit": 50} | ({"cursor": cursor} if cursor else {})
        with CaptureQueriesContext(connection) as queries:
            body = client.get(f"/api/houses/{world.house.slug}", params).json()
        assert len(queries) <= 6
        house = house or body["house"]
        in_house += [t["id"] for t in body["threads"]]
        cursor = body["next"]
        if not cursor:
            break
    assert len(in_house) == len(set(in_house)) == world.house.threads.count()
    assert sum(house["counts"].values()) == world.house.threads.count()  # the rollup is whole
    from houses.models import House
    from houses.rollup import rollups, with_rollup

    (whole,) = rollups(with_rollup(House.objects.filter(pk=world.house.pk), world.member))
    assert house == whole  # the same rollup as the SQL one over every live thread
    bad = client.get("/api/threads", {"cursor": "../../etc"})
    assert bad.status_code == 400 and "cursor" in bad.json()["error"]
    assert client.get("/api/threads", {"limit": "lots"}).status_code == 400


def test_a_row_with_news_is_not_repeated_by_later_pages(world):
    rows = many(world, ROWS + 10)
    client = world.client_for(world.member)
    html = client.get(f"/houses/{world.house.slug}/").content.decode()
    first = titles(html)
    # The oldest row on the first page gets news: it moves up, the next page starts below.
    Thread.objects.filter(title=first[-1]).update(last_entry_ts=1_900_000_000_000)
    more = re.search(r'id="more-threads"[^>]*hx-get="([^"]+)"', html).group(1).replace("&amp;", "&")
    rest = titles(client.get(more).content.decode())
    assert not set(rest) & set(first)
    assert len(first) + len(rest) == len(rows) + 2  # and the fixture's two threads
