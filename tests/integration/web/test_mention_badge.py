"""A mention of you shows as its own badge on the house page's thread row, beside the unread
count, until you read up to it (read from the inbox index, as the sidebar's badge is); mentions
of others, of bots, and your own don't count."""

import pytest

from notify.models import InboxItem
from tests.integration.web.test_house_unread import post
from threads.unread import mark_read

pytestmark = pytest.mark.django_db(transaction=True)


def row(world, user, thread=None) -> str:
    thread = thread or world.thread
    html = world.client_for(user).get(f"/houses/{world.house.slug}/").content.decode()
    start = html.index(f'id="thread-{thread.id}"')
    return html[start : html.index("</li>", start)]


def test_a_mention_shows_a_mention_badge_until_read(world):
    post(world, world.author, "plain news")
    assert "mention-count" not in row(world, world.member)
    post(world, world.author, "@mia can you look?")
    post(world, world.author, "and again @mia, @helper and @olive")
    mine = row(world, world.member)
    assert 'class="mention-count" title="2 unread mentions of you">@2<' in mine
    assert 'class="unread" title="3 unread messages">3<' in mine
    owners = row(world, world.owner)
    assert 'title="1 unread mention of you">@1<' in owners
    assert "mention-count" not in row(world, world.author)  # nobody mentioned them
    assert "mention-count" not in row(world, world.member, world.other_thread)

    mark_read(world.member, world.thread.id)
    assert "mention-count" not in row(world, world.member)
    assert not InboxItem.objects.filter(user=world.member, read_at__isnull=False).exists()


def test_mentioning_yourself_or_a_stranger_counts_nothing(world):
    post(world, world.member, "note to @mia self, and @eve who is elsewhere")
    assert "mention-count" not in row(world, world.member)
    assert not InboxItem.objects.filter(user__in=[world.member, world.stranger]).exists()


def test_the_live_row_carries_the_badge(world):
    from houses.fragments import row_fragment

    post(world, world.author, "hey @mia")
    html = row_fragment(world.house.pk, world.thread.id, world.member)
    assert "@1" in html and "mention-count" in html
