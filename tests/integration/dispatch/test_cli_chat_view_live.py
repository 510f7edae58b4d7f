"""``arbe thread entries read`` as a chat view: a message deleted before the read is not in
its catch-up (nor is its tombstone); ``--raw`` labels it; a removed member keeps their name."""

import pytest

from houses.membership import remove_member
from tests.integration.test_cli import Terminal

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


def test_entries_read_catches_up_without_deleted_messages_and_raw_labels_them(live):
    author, owner = Terminal(live.world.author), Terminal(live.world.owner)
    thread = live.world.thread.id
    author("post", thread, "--id", "kept-1", "this stays")
    author("post", thread, "--id", "oops-1", "this goes")
    live.settle()
    assert owner("delete", thread, "oops-1").code == 0
    live.settle()
    out = author("thread", "entries", "read", thread).out
    assert "[kept-1]" in out
    assert "oops-1" not in out and "this goes" not in out and "deleted" not in out
    raw = author("thread", "entries", "read", thread, "--raw").out
    assert "this goes  [oops-1] (deleted)" in raw and "message oops-1 was deleted" in raw


def test_entries_read_names_a_removed_member(live):
    thread = live.world.thread.id
    Terminal(live.world.author)("post", thread, "--id", "by-ari", "before I leave")
    live.settle()
    remove_member(live.world.house.memberships.get(user=live.world.author))
    out = Terminal(live.world.owner)("thread", "entries", "read", thread).out
    assert "ari: before I leave  [by-ari]" in out and "someone" not in out
