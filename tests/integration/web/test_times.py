"""Every page renders times the one way when.js formats: <time datetime data-relative>, a
relative fallback, the exact moment on hover; never a bare UTC stamp (issue 23, item 6)."""

import re

import pytest

from houses.invites import make_invite
from houses.tokens import issue_token

pytestmark = pytest.mark.django_db(transaction=True)

RELATIVE = re.compile(r'<time datetime="[^"]+" title="[^"]+" data-relative(="clock")?>[^<]+</time>')


def times(html: str) -> list[str]:
    return re.findall(r"<time[^>]*>[^<]*</time>", html)


def test_pages_render_relative_times_with_the_exact_one_on_hover(world):
    owner = world.client_for(world.owner)
    owner.post(f"/api/threads/{world.thread.id}/entries", {"text": "standup notes"})
    make_invite(world.house, by=world.owner, days=7)
    issue_token(world.owner, "laptop")
    owner.get("/account/tokens/")  # "used" is set by token reads only; "made" is enough here
    pages = {
        "thread": f"/threads/{world.thread.id}/",
        "house": "/houses/h/",
        "search": "/search/?q=standup",
        "members": "/houses/h/members/",
        "tokens": "/account/tokens/",
    }
    for name, path in pages.items():
        found = times(owner.get(path).content.decode())
        assert found, name
        for time in found:
            assert RELATIVE.fullmatch(time), (name, time)
            assert "UTC</time>" not in time or 'data-relative="clock"' in time, (name, time)
    members = owner.get("/houses/h/members/").content.decode()
    assert ">in 7 days</time>" in members or ">in 6 days</time>" in members
