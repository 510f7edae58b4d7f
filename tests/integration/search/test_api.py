"""``GET /api/search`` and the page: operators, membership, archived threads, bad queries."""

import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from houses.membership import remove_member
from search.query import day_start_ms
from threads.entries import Chat, Entry
from threads.lifecycle import new_entry
from threads.models import Thread
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def say(thread, author, text, ts=None) -> str:
    entry = new_entry(Chat(text=text), author=author.id)
    if ts is not None:
        entry = Entry(id=entry.id, ts=ts, payload=entry.payload, authorId=entry.authorId)
    stream_writer().append(thread.stream_name, entry)
    return entry.id


def search(client, q, status=200, **params):
    response = client.get("/api/search", {"q": q, **params})
    assert response.status_code == status, response.content
    return response.json()


def ids(answer) -> list[str]:
    return [r["entryId"] for r in answer["results"]]


@pytest.fixture
def chat(world):
    """A few messages in two threads of the house, by two people and a bot."""
    a, b = world.author.agent, world.member.agent
    return {
        "deploy": say(world.thread, a, "Deploy postgres tonight after the review"),
        "rollback": say(world.thread, b, "Deploy rollback plan: postgres snapshot first"),
        "notes": say(world.other_thread, a, "The release notes are in the wiki"),
        "bot": say(world.thread, world.bot, "I checked the release notes: all good"),
    }


def test_results_newest_first_with_thread_house_author_and_link(world, chat):
    answer = search(world.token_client(world.member), "postgres")
    assert ids(answer) == [chat["rollback"], chat["deploy"]]
    first = answer["results"][0]
    assert first["threadId"] == world.thread.id and first["threadTitle"] == "Plans"
    assert first["house"] == {"slug": "h", "name": "H"}
    assert first["author"]["handle"] == world.member.agent.handle
    assert first["url"] == f"/threads/{world.thread.id}/#entry-{chat['rollback']}"
    assert "<mark>postgres</mark>" in first["snippet"].lower()
    assert answer["next"] is None


def test_each_operator(world, chat):
    client = world.token_client(world.owner)
    assert ids(search(client, '"release notes"')) == [chat["bot"], chat["notes"]]
    assert ids(search(client, '"notes release"')) == []
    assert ids(search(client, "deploy -rollback")) == [chat["deploy"]]
    assert ids(search(client, 'deploy -"rollback plan"')) == [chat["deploy"]]
    assert ids(search(client, "notes from:@helper")) == [chat["bot"]]
    assert ids(search(client, f"from:@{world.author.agent.handle}")) == [
        chat["notes"],
        chat["deploy"],
    ]
    assert ids(search(client, f"deploy -from:@{world.member.agent.handle}")) == [chat["deploy"]]
    assert ids(search(client, "from:@nobody")) == []
    assert ids(search(client, "notes in:h")) == [chat["bot"], chat["notes"]]
    assert ids(search(client, "notes in:elsewhere")) == []  # not the owner's house
    assert ids(search(client, "notes -in:h")) == []
    assert ids(search(world.token_client(world.author), "from:me")) == [
        chat["notes"],
        chat["deploy"],
    ]
    # Unknown operators are text; case and punctuation don't matter.
    assert ids(search(client, "POSTGRES: tonight!")) == [chat["deploy"]]


def test_dates(world):
    day = dt.date(2026, 6, 15)
    old = say(world.thread, world.author.agent, "dated message", ts=day_start_ms(day) + 5)
    new = say(world.thread, world.author.agent, "dated message", ts=day_start_ms(day) + 86_400_000)
    client = world.token_client(world.author)
    assert ids(search(client, "dated before:2026-06-16")) == [old]
    assert ids(search(client, "dated after:2026-06-15")) == [new]
    assert ids(search(client, "dated after:2026-06-14 before:2026-06-16")) == [old]
    assert ids(search(client, "dated after:2026-06-16 before:2026-06-16")) == []
    assert ids(search(client, "dated after:yesterday")) == []


def test_a_house_you_are_not_in_never_appears(world, chat):
    stranger = world.token_client(world.stranger)
    assert ids(search(stranger, "postgres")) == []
    assert ids(search(stranger, "postgres in:h")) == []
    assert search(stranger, "postgres", status=404, house="h") == {"error": "Not found."}
    assert search(stranger, "postgres", status=404, house="no-such") == {"error": "Not found."}
    member = world.token_client(world.member)
    assert len(ids(search(member, "postgres", house="h"))) == 2
    search(member, "postgres", house="elsewhere", status=404)


def test_a_house_you_left_drops_out(world, chat):
    client = world.token_client(world.member)
    assert ids(search(client, "postgres"))
    remove_member(world.house.memberships.get(user=world.member))
    assert ids(search(client, "postgres")) == []


def test_archived_threads_drop_out(world, chat):
    client = world.token_client(world.member)
    Thread.objects.filter(pk=world.thread.pk).update(archived_at=timezone.now())
    assert ids(search(client, "notes")) == [chat["notes"]]


def test_people_only(world, chat):
    assert world.client_for(None).get("/api/search", {"q": "x"}).status_code == 401
    bot = world.jwt_client(world.jwt())
    assert bot.get("/api/search", {"q": "postgres"}).status_code == 403


@pytest.mark.parametrize(
    "q",
    [
        "",
        "   ",
        "-",
        "- -",
        '"" ) (',
        "-deploy",
        "from:",
        "before:tomorrow",
        "before:2026-02-30",
        "-before:2026-01-01",
        "x" * 10_000,
        " ".join(["w"] * 17),
    ],
)
def test_bad_queries_get_a_clear_400(world, chat, q):
    answer = search(world.token_client(world.member), q, status=400)
    assert answer["error"].startswith("q: ")


@pytest.mark.parametrize(
    "q",
    [
        '"deploy postgres',  # unterminated: a phrase to the end
        "deploy OR",
        "NOT deploy",
        "deploy AND",
        'de"ploy',
        "x-ray",
        "user@example.com",
        "foo:* & !bar",
        'in:"H" deploy',
        "from:@nobody deploy",
        "deploy*",
        "(deploy)",
        "_",
        "🚀 deploy",
    ],
)
def test_odd_queries_get_results_never_an_error(world, chat, q):
    search(world.token_client(world.member), q, status=200)


@pytest.mark.parametrize("q", ["\u0000 deploy", "de\u0000ploy"])
def test_a_nul_in_the_query_is_a_clear_400(world, chat, q):
    answer = search(world.token_client(world.member), q, status=400)
    assert answer["error"] == "The address holds a NUL character."


def test_bad_cursor_sort_and_limit_are_400(world, chat):
    client = world.token_client(world.member)
    assert search(client, "postgres", status=400, cursor="zzz")["error"].startswith("cursor:")
    assert search(client, "postgres", status=400, sort="oldest")["error"].startswith("sort:")
    assert search(client, "postgres", status=400, limit="many")["error"].startswith("limit:")
    # A newest-first cursor doesn't page a best-match search.
    assert search(client, "postgres", status=400, cursor="n5", sort="relevance")


def test_pages_follow_the_cursor_to_the_end(world):
    sent = [say(world.thread, world.author.agent, f"paged message {n}") for n in range(7)]
    client = world.token_client(world.member)
    for sort in ("newest", "relevance"):
        seen, cursor = [], None
        while True:
            extra = {"cursor": cursor} if cursor else {}
            answer = search(client, "paged", limit=3, sort=sort, **extra)
            seen += ids(answer)
            cursor = answer["next"]
            if cursor is None:
                break
        assert sorted(seen) == sorted(sent)
        if sort == "newest":
            assert seen == sent[::-1]


def test_relevance_puts_the_denser_match_first(world):
    once = say(world.thread, world.author.agent, "backup once then many other words here")
    many = say(world.thread, world.author.agent, "backup backup backup")
    client = world.token_client(world.member)
    assert ids(search(client, "backup", sort="relevance")) == [many, once]
    assert ids(search(client, "backup")) == [many, once]  # newest first too, here


def test_snippets_are_escaped_html_with_marks(world):
    say(world.thread, world.author.agent, 'deploy <img src=x onerror="alert(1)"> \x02boom\x03')
    answer = search(world.token_client(world.member), "deploy")
    snippet = answer["results"][0]["snippet"]
    # Nothing but the marks is markup, whatever part of the text the excerpt kept.
    assert "<" not in re.sub("</?mark>", "", snippet) and ">" not in re.sub("</?mark>", "", snippet)
    assert "<mark>deploy</mark>" in snippet
    assert snippet.count("<mark>") == snippet.count("</mark>") == 1


def test_filters_only_list_by_recency_with_a_plain_excerpt(world, chat):
    answer = search(world.token_client(world.member), "from:@helper")
    assert ids(answer) == [chat["bot"]]
    assert answer["results"][0]["snippet"] == "I checked the release notes: all good"


def test_query_count_does_not_grow_with_results(world):
    client = world.client_for(world.member)
    say(world.thread, world.bot, "counted")
    with CaptureQueriesContext(connection) as one:
        search(client, "counted from:@helper")
    for n in range(10):
        say(world.thread if n % 2 else world.other_thread, world.bot, f"counted {n}")
    with CaptureQueriesContext(connection) as many:
        assert len(ids(search(client, "counted from:@helper"))) == 11
    assert len(many.captured_queries) == len(one.captured_queries)


def test_the_search_page(world, chat):
    client = world.client_for(world.member)
    page = client.get("/search/", {"q": "release notes", "house": "h"})
    assert page.status_code == 200
    html = page.content.decode()
    assert f'href="/threads/{world.thread.id}/#entry-{chat["bot"]}"' in html
    assert "<mark>release</mark>" in html and "Plans" in html
    bad = client.get("/search/", {"q": "-deploy"}).content.decode()
    assert "add a word to look for" in bad
    assert "nothing to search for" in client.get("/search/", {"q": "-"}).content.decode()
    assert client.get("/search/", {"q": "x", "house": "elsewhere"}).status_code == 404
    # The top bar offers the house's search on the house page.
    house_page = client.get("/houses/h/").content.decode()
    assert 'action="/search/"' in house_page and 'value="h">This house' in house_page


def test_more_results_by_cursor_on_the_page(world):
    for n in range(25):
        say(world.thread, world.author.agent, f"many result {n}")
    client = world.client_for(world.member)
    html = client.get("/search/", {"q": "many"}).content.decode()
    assert html.count('class="result"') == 20 and "More results" in html
    more = client.get("/search/", {"q": "many", "cursor": _cursor(html)}, HTTP_HX_REQUEST="true")
    assert more.content.decode().count('class="result"') == 5
    assert "<html" not in more.content.decode()


def _cursor(html: str) -> str:
    return re.search(r"cursor=([a-z0-9]+)", html).group(1)
