"""A display name is what people are called everywhere: the top bar, the members and invite
lists, and ``arbe read``; handles stay beside them where a handle helps (mentions)."""

import pytest

from houses.invites import make_invite
from houses.renaming import rename
from tests.integration.test_cli import Terminal

pytestmark = pytest.mark.django_db(transaction=True)


def named(world):
    rename(world.owner.agent, "Olive Oyl")
    rename(world.member.agent, "Mia Wallace")


def test_pages_call_people_by_their_display_names(world):
    named(world)
    make_invite(world.house, world.owner)
    owner = world.client_for(world.owner)
    for path in ("/", "/houses/h/", f"/threads/{world.thread.id}/", "/houses/h/members/"):
        html = owner.get(path).content.decode()
        assert ">Olive Oyl</a>" in html, path  # the top bar
    members = owner.get("/houses/h/members/").content.decode()
    assert "Mia Wallace <small>@mia</small>" in members
    assert "Remove Mia Wallace from" in members
    assert "made by Olive Oyl" in members


def test_arbe_read_shows_display_names(world):
    named(world)
    arbe = Terminal(world.member)
    posted = arbe("post", world.thread.id, "hello")
    assert posted.code == 0
    out = arbe("read", world.thread.id).out
    assert f"Mia Wallace: hello  [{posted.out.strip()}]" in out
