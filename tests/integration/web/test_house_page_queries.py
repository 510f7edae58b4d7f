"""The house page's SQL is a budget, not a function of its size: at 3,000 threads it takes
at most 7 queries (bench/pages.py measures the same page at 10,000)."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.factories import make_house, make_user
from threads.models import Status, Thread

pytestmark = pytest.mark.django_db

# The page's own six (session, user, membership, its facts, a page of threads with read
# positions, names), the people one may message (threads.people, bounded), and the
# sidebar's four (houses/sidebar.py).
BUDGET = 6 + 1 + 4


def test_the_house_page_at_3000_threads_takes_at_most_6_queries_and_the_sidebars():
    owner, member = make_user("olive"), make_user("mia")
    house = make_house("big", owner=owner, members=[member])
    states = list(Status.values)
    Thread.objects.bulk_create(
        [
            Thread(
                house=house,
                title=f"thread {i}",
                created_by=owner.agent,
                status=states[i % len(states)],
                last_entry_ts=1_700_000_000_000 + i * 1000,
            )
            for i in range(3000)
        ],
        batch_size=1000,
    )
    for user in (owner, member):
        client = Client()
        client.force_login(user)
        assert client.get("/houses/big/").status_code == 200  # warm
        with CaptureQueriesContext(connection) as page:
            response = client.get("/houses/big/")
        assert response.status_code == 200
        assert "thread 2999" in response.content.decode()
        sql = [q["sql"][:120] for q in page.captured_queries]
        assert len(sql) <= BUDGET, "\n".join(sql)


def test_half_private_at_3000_threads_keeps_the_budget_and_shows_only_what_each_reads():
    """Half the threads private, the member in a third of those: the same query budget
    (who reads what is a subquery of the page's own query), and each list is theirs."""
    from threads.models import ThreadMember, Visibility

    owner, member = make_user("olive"), make_user("mia")
    house = make_house("big", owner=owner, members=[member])
    Thread.objects.bulk_create(
        [
            Thread(
                house=house,
                title=f"thread {i}",
                created_by=owner.agent,
                visibility=Visibility.PRIVATE if i % 2 else Visibility.HOUSE,
                last_entry_ts=1_700_000_000_000 + i * 1000,
            )
            for i in range(3000)
        ],
        batch_size=1000,
    )
    private = list(Thread.objects.filter(house=house, visibility=Visibility.PRIVATE))
    rows = [ThreadMember(thread=t, agent=owner.agent) for t in private]
    rows += [ThreadMember(thread=t, agent=member.agent) for t in private[::3]]
    ThreadMember.objects.bulk_create(rows, batch_size=1000)
    theirs = {t.title for t in private[::3]}
    for user in (owner, member):
        client = Client()
        client.force_login(user)
        assert client.get("/houses/big/").status_code == 200  # warm
        with CaptureQueriesContext(connection) as page:
            response = client.get("/houses/big/")
        assert response.status_code == 200
        sql = [q["sql"][:120] for q in page.captured_queries]
        assert len(sql) <= BUDGET, "\n".join(sql)
        # The list APIs keep theirs too (as open: bench/pages.py measures both).
        for url, budget in (("/api/houses/big", 6), ("/api/threads", 4)):
            with CaptureQueriesContext(connection) as api:
                assert client.get(url).status_code == 200
            assert len(api.captured_queries) <= budget, url
        html = response.content.decode()
        assert "thread 2998" in html  # open
        # 2999 is private: the owner is in it; the member only if it is among theirs.
        assert ("thread 2999" in html) == (user == owner or "thread 2999" in theirs)
    member_page = Client()
    member_page.force_login(member)
    html = member_page.get("/houses/big/").content.decode()
    hidden = [t.title for t in private[-40:] if t.title not in theirs]
    assert ">thread 2998</a>" in html  # how a row shows its title
    assert hidden and not any(f">{title}</a>" in html for title in hidden)
