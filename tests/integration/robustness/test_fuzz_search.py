"""The search language against generated input: arbitrary strings, date-ish tokens at the
edges of the calendar, operators with odd values, odd cursors, sorts and limits. The API
and the page never answer 5xx; a refusal is a 400 with one sentence."""

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from search.query import FIRST_DAY, LAST_DAY

pytestmark = pytest.mark.django_db(transaction=True)

FUZZ = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

digits = st.text("0123456789", min_size=0, max_size=6)
# Dates near and past either end of what Python and the index can hold, and almost-dates.
dates = (
    st.dates().map(str)
    | st.sampled_from(["9999-12-31", "0001-01-01", "0000-00-00", "1969-12-31", "3000-01-01"])
    | st.builds(lambda y, m, d: f"{y}-{m}-{d}", digits, digits, digits)
    | st.sampled_from(["today", "yesterday", "TODAY", "tomorrow", "٢٠٢٦-١١-٠١", "2026-11-01\n"])
    | st.text(max_size=12)
)
operators = st.sampled_from(["after", "before", "from", "in", "AFTER", "-after", "-from", "x"])
tokens = (
    st.builds(lambda op, value: f"{op}:{value}", operators, dates)
    | st.builds(lambda op, value: f'{op}:"{value}', operators, st.text(max_size=10))
    | st.sampled_from(['"', "-", '-"', "from:@", "in:", ":", "@", "me", "NOT", "OR", "*"])
    | st.text(max_size=12)
)
queries = st.lists(tokens, max_size=8).map(" ".join) | st.text(max_size=80)
params = st.fixed_dictionaries(
    {},
    optional={
        "sort": st.sampled_from(["newest", "relevance", "", "x"]),
        "cursor": st.sampled_from(["n1", "r0", "r9999", "n" + "9" * 18, "x", ""])
        | st.text(max_size=8),
        "limit": st.sampled_from(["0", "-1", "1", "50", "9" * 30, "x", "١"]),
        "house": st.sampled_from(["h", "elsewhere", "", "no-such"]) | st.text(max_size=8),
    },
)


def check(response, *, api: bool):
    assert response.status_code < 500, response.content
    if api and response.status_code >= 400:
        assert response["Content-Type"] == "application/json", response.content
        assert isinstance(response.json()["error"], str)


@FUZZ
@given(q=queries, extra=params)
@example(q="after:9999-12-31", extra={})
@example(q="before:0001-01-01 after:9999-12-31", extra={"sort": "relevance"})
def test_the_search_api_never_fails_the_server(world, q, extra):
    client = world.token_client(world.member)
    check(client.get("/api/search", {"q": q, **extra}), api=True)


@FUZZ
@given(q=queries)
@example(q="after:9999-12-31")
def test_the_search_page_never_fails_the_server(world, q):
    check(world.client_for(world.member).get("/search/", {"q": q}), api=False)


@pytest.mark.parametrize(
    "q",
    ["after:9999-12-31", "before:9999-12-31", "after:0001-01-01", "after:3000-01-01"]
    + ["before:1969-12-31", "after:٢٠٢٦-١١-٠١", "after:99999-01-01"],
)
def test_far_and_foreign_dates_are_a_clear_400(world, q):
    response = world.token_client(world.member).get("/api/search", {"q": q})
    assert response.status_code == 400, response.content
    assert "date" in response.json()["error"]


def test_the_edges_of_the_range_are_dates(world):
    client = world.token_client(world.member)
    for q in (f"after:{LAST_DAY}", f"before:{FIRST_DAY}", f"after:{FIRST_DAY} before:{LAST_DAY}"):
        response = client.get("/api/search", {"q": q})
        assert response.status_code == 200, response.content
