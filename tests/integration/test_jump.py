"""Ctrl/Cmd+K's thread jump: by name, only in your houses."""

import pytest

from tests.factories import make_house
from threads.lifecycle import create_thread

pytestmark = pytest.mark.django_db(transaction=True)


def test_threads_by_name_across_your_houses_only(world):
    theirs = make_house("secret", owner=world.stranger)
    create_thread(house=theirs, title="Plans for the takeover", by=world.stranger.agent)
    answer = world.client_for(world.member).get("/threads/jump", {"q": "plan"}).json()
    assert [(t["title"], t["house"]) for t in answer["threads"]] == [("Plans", world.house.name)]
    assert answer["threads"][0]["url"] == f"/threads/{world.thread.id}/"
    every = world.client_for(world.member).get("/threads/jump").json()["threads"]
    assert {t["title"] for t in every} == {"Plans", "Other"}
    assert world.client_for(None).get("/threads/jump").status_code == 302
