"""``arbe`` readers show the thread as the page does: a deleted message is not in the history
they catch up (``read``, ``follow``, ``thread entries read``), and a removed member's messages
keep their name. Raw and JSON reads keep every entry."""

import io
import threading

import pytest

from houses.membership import remove_member
from tests.integration.test_cli import Terminal, offset_in, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def post_and_delete(world):
    author, owner = Terminal(world.author), Terminal(world.owner)
    author("post", world.thread.id, "--id", "kept-1", "this stays")
    author("post", world.thread.id, "--id", "oops-1", "this goes")
    assert owner("delete", world.thread.id, "oops-1").code == 0
    return author


def test_read_leaves_out_a_deleted_message_and_its_tombstone(world):
    out = post_and_delete(world)("read", world.thread.id).out
    assert "[kept-1]" in out
    assert "oops-1" not in out and "this goes" not in out and "deleted" not in out


def test_follow_catches_up_without_a_deleted_message_then_says_when_one_goes(world):
    arbe = post_and_delete(world)
    cancel, screen = threading.Event(), io.StringIO()
    ran = []
    follower = threading.Thread(
        target=lambda: ran.append(arbe("follow", world.thread.id, cancel=cancel, stdout=screen))
    )
    follower.start()
    arbe("post", world.thread.id, "--id", "live-1", "said live")
    wait_for(lambda: "[live-1]" in screen.getvalue())
    Terminal(world.owner)("delete", world.thread.id, "live-1")
    wait_for(lambda: "message live-1 was deleted" in screen.getvalue())
    cancel.set()
    follower.join(10)  # a guard against a hang, not a timing check
    assert not follower.is_alive() and ran[0].code == 0
    shown = screen.getvalue()
    assert "[kept-1]" in shown and "oops-1" not in shown and "this goes" not in shown
    # Resuming from an offset before the deletion: the message is gone from that catch-up too.
    again = arbe("follow", world.thread.id, "--from", offset_in(ran[0].err), cancel=cancel)
    assert "[live-1]" not in again.out


def test_a_removed_members_messages_keep_their_name(world):
    arbe = Terminal(world.author)
    arbe("post", world.thread.id, "--id", "by-ari", "before I leave")
    remove_member(world.house.memberships.get(user=world.author))
    owner = Terminal(world.owner)
    out = owner("read", world.thread.id).out
    assert "ari: before I leave  [by-ari]" in out and "someone" not in out
    assert "@ari: before I leave" in owner("search", "leave").out


def test_the_members_api_names_only_former_authors_of_its_own_house(world, client):
    from tests.factories import make_user

    stranger_agent = world.stranger.agent.id
    never_wrote = make_user("nadia").agent.id
    Terminal(world.author)("post", world.thread.id, "hello")
    remove_member(world.house.memberships.get(user=world.author))
    client.force_login(world.owner)
    ids = ",".join([world.author.agent.id, stranger_agent, never_wrote, world.member.agent.id])
    former = client.get(f"/api/houses/h/members?authors={ids}").json()["former"]
    assert [f["handle"] for f in former] == ["ari"]
    assert client.get("/api/houses/h/members?authors=not-an-id").status_code == 400
