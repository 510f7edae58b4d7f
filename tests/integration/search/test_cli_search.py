"""``arbe search``: every page by cursor, operators with dashes, errors in plain words."""

import pytest

from tests.integration.test_cli import Terminal
from threads.entries import Chat
from threads.lifecycle import new_entry
from threads.recency import stream_writer

pytestmark = pytest.mark.django_db(transaction=True)


def test_search_follows_the_cursor_and_takes_dashed_words(world):
    for n in range(60):
        text = f"deploy step {n}" + (" rollback" if n % 2 else "") + " <b>&"
        stream_writer().append(
            world.thread.stream_name, new_entry(Chat(text=text), author=world.author.agent.id)
        )
    arbe = Terminal(world.member)
    ran = arbe("search", "deploy", "-rollback", "--house", "h")
    assert ran.code == 0, ran.err
    lines = ran.out.splitlines()
    assert len(lines) == 30  # two pages of the API's 50
    assert lines[0].split("  ")[1] == "h/Plans"
    assert f"@{world.author.agent.handle}: deploy step 58 <b>&" in lines[0]
    assert all("rollback" not in line for line in lines)
    assert len(arbe("search", "deploy", "--max", "5").out.splitlines()) == 5


def test_search_errors_are_plain_sentences(world):
    arbe = Terminal(world.member)
    ran = arbe("search", "-deploy")
    assert ran.code == 1 and "add a word to look for" in ran.err
    assert "Not found" in arbe("search", "x", "--house", "elsewhere").err
    assert arbe("search", "nothing-here").err.strip() == "No messages match."
