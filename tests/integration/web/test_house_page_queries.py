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
