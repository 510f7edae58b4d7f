"""``arbe dm``: the direct conversation with people and bots, by handle, from a terminal."""

import pytest

from tests.integration.test_cli import Terminal
from threads.models import Thread

pytestmark = pytest.mark.django_db(transaction=True)


def test_arbe_dm_opens_and_reopens_the_conversation(world):
    mia = Terminal(world.member)
    first = mia("dm", "@olive")
    assert first.code == 0, first.err
    thread_id, title = first.out.split(maxsplit=1)
    assert title.strip() == world.owner.agent.display_name
    assert Thread.objects.get(pk=thread_id).is_direct
    again = Terminal(world.owner)("dm", world.member.agent.handle, "--house", "h")
    assert again.out.split()[0] == thread_id
    assert mia("post", thread_id, "just us").code == 0
    # Ari isn't in it: the same answer as for a thread that isn't there.
    assert Terminal(world.author)("read", thread_id).code == 1
    with_bot = mia("dm", "@helper", "@olive")
    assert with_bot.code == 0 and with_bot.out.split()[0] != thread_id


def test_arbe_dm_says_what_is_wrong(world):
    mia = Terminal(world.member)
    nobody = mia("dm", "@nobody")
    assert nobody.code == 1 and "Nobody called '@nobody' in h." in nobody.err
    eve = Terminal(world.stranger)
    assert "Nobody called" in eve("dm", "@olive").err  # her only house is another one
