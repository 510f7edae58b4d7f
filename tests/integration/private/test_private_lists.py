"""Every list and count a person sees leaves out the private threads they aren't in: the
thread lists (API, house page, sidebar, jump), the house rollups, unread totals, search,
the inbox and the bell, mentions and notifications. Ari (``world.author``) is in the house
but not in "Salaries"; Mia (``world.member``) and Olive (the owner) are."""

import pytest

from houses.access import readers_of
from notify.models import InboxItem, Outbox
from notify.recipients import recipients
from threads import privacy
from threads.unread import house_unread

pytestmark = pytest.mark.django_db(transaction=True)


def post(world, user, text, thread) -> str:
    response = world.client_for(user).post(f"/api/threads/{thread.id}/entries", {"text": text})
    assert response.status_code == 201, response.content
    return response.json()["entry"]["id"]


@pytest.fixture
def salaries(world):
    thread = privacy.start_private(
        world.house, "Salaries", world.owner.agent, [world.member.agent.pk]
    )
    post(world, world.owner, "Quarterly bonus figures, zebracorn budget", thread)
    return thread


def get(world, user, path, **params):
    response = world.client_for(user).get(path, params)
    assert response.status_code == 200, response.content[:300]
    return response


def test_thread_lists_leave_it_out(world, salaries):
    for user, sees in ((world.member, True), (world.owner, True), (world.author, False)):
        listed = [t["id"] for t in get(world, user, "/api/threads").json()["threads"]]
        assert (salaries.id in listed) is sees and world.thread.id in listed
        in_house = get(world, user, "/api/houses/h").json()
        assert (salaries.id in [t["id"] for t in in_house["threads"]]) is sees
        assert sum(in_house["house"]["counts"].values()) == (3 if sees else 2)
        (rollup,) = get(world, user, "/api/houses").json()["houses"]
        assert rollup["counts"] == in_house["house"]["counts"]
        found = get(world, user, "/threads/jump", q="Salaries").json()["threads"]
        assert bool(found) is sees
        for page in ("/houses/h/", f"/houses/h/sidebar?current={world.thread.id}"):
            html = get(world, user, page).content.decode()
            assert ("Salaries" in html) is sees and "Plans" in html, page


def test_the_rollup_speaker_is_never_a_private_thread_of_others(world, salaries):
    from threads.models import Thread

    Thread.objects.filter(pk=salaries.pk).update(status="blocked", status_message="secret need")
    owner = get(world, world.owner, "/api/houses/h").json()["house"]
    ari = get(world, world.author, "/api/houses/h").json()["house"]
    assert owner["status"] == "blocked" and owner["speaker"]["id"] == salaries.id
    assert ari["status"] != "blocked" and "secret" not in str(ari)
    assert "secret need" not in get(world, world.author, "/").content.decode()


def test_unread_totals_count_it_for_its_members_only(world, salaries):
    before = house_unread(world.author, [world.house.pk])[world.house.pk]
    post(world, world.owner, "more figures", salaries)
    assert house_unread(world.author, [world.house.pk])[world.house.pk] == before
    assert house_unread(world.member, [world.house.pk])[world.house.pk] >= 2
    post(world, world.owner, "open news", world.thread)
    assert house_unread(world.author, [world.house.pk])[world.house.pk] == before + 1


def test_search_finds_its_messages_for_its_members_only(world, salaries):
    def hits(user):
        answer = get(world, user, "/api/search", q="zebracorn").json()
        return [r["threadId"] for r in answer["results"]]

    assert hits(world.member) == [salaries.id] and hits(world.owner) == [salaries.id]
    assert hits(world.author) == []
    assert get(world, world.author, "/search/", q="zebracorn").content.decode().count(
        "zebracorn"
    ) == get(world, world.author, "/search/", q="nothingmatches").content.decode().count(
        "nothingmatches"
    )


def test_a_mention_of_someone_outside_it_notifies_nobody(world, salaries):
    entry = post(world, world.member, "@ari @olive have a look", salaries)
    assert not InboxItem.objects.filter(user=world.author).exists()
    assert InboxItem.objects.filter(user=world.owner, entry_id=entry).exists()
    item = Outbox.objects.get(entry_id=entry)
    told = {r.user_id for r in recipients(item, salaries, world.member.agent)}
    assert world.author.pk not in told and world.owner.pk in told
    assert set(readers_of(salaries)) == {world.owner, world.member}


def test_removal_hides_their_inbox_items_of_it(world, salaries):
    post(world, world.owner, "@mia see the numbers", salaries)
    post(world, world.owner, "@mia and here", world.thread)
    inbox = get(world, world.member, "/api/inbox").json()
    assert {i["threadId"] for i in inbox["items"]} == {salaries.id, world.thread.id}
    assert privacy.remove_member(salaries, world.member.agent.pk, world.owner.agent)
    inbox = get(world, world.member, "/api/inbox").json()
    assert [i["threadId"] for i in inbox["items"]] == [world.thread.id]
    assert inbox["unread"] == 1
    assert "see the numbers" not in get(world, world.member, "/inbox/").content.decode()


def test_mail_drops_a_notice_of_a_thread_they_left(world, salaries):
    from notify.mail import _still_news
    from notify.models import Notice

    entry = post(world, world.owner, "@mia numbers", salaries)
    notice = Notice.objects.create(
        user=world.member,
        thread=salaries,
        entry_id=entry,
        channel="email",
        state="queued",
        author="Olive",
        text="numbers",
    )
    assert _still_news(world.member.pk, [notice]) == [notice]
    privacy.remove_member(salaries, world.member.agent.pk, world.owner.agent)
    assert _still_news(world.member.pk, [notice]) == []


def test_a_bot_outside_it_is_refused_by_the_sandbox_proxy(world, salaries):
    """A bot's sandbox token for the private thread's stream: 404 unless the bot is in it,
    as for a stream that doesn't exist."""
    from arbe_lib.ids import random_id

    answers = []
    for stream in (salaries.stream_name, f"arbe-thread-{random_id(10)}"):
        client = world.jwt_client(world.jwt(stream=stream))
        response = client.get(f"/api/stream/{stream}", {"offset": "-1"})
        answers.append((response.status_code, response.content.replace(stream.encode(), b"")))
    assert answers[0] == answers[1] and answers[0][0] == 404
    privacy.add_member(salaries, world.bot.pk, world.owner.agent)
    client = world.jwt_client(world.jwt(stream=salaries.stream_name))
    assert client.get(f"/api/stream/{salaries.stream_name}", {"offset": "-1"}).status_code == 200


def test_the_cli_lists_it_to_its_members_only(world, salaries):
    """``arbe threads``, ``arbe inbox``, ``arbe search`` and ``arbe read`` use the API."""
    from tests.integration.test_cli import Terminal

    post(world, world.owner, "@mia @ari zebracorn totals", salaries)
    mia, ari = Terminal(world.member), Terminal(world.author)
    assert salaries.id in mia("threads", "h").out and "Salaries" in mia("inbox").out
    assert salaries.id in mia("search", "zebracorn").out
    assert "Plans" in ari("threads", "h").out and salaries.id not in ari("threads", "h").out
    assert "Salaries" not in ari("inbox").out and salaries.id not in ari("search", "zebracorn").out
    refused, missing = ari("read", salaries.id), ari("read", "nothere123")
    assert refused.code == missing.code == 1
    assert refused.err.replace(salaries.id, "X") == missing.err.replace("nothere123", "X")


def test_a_former_member_who_wrote_only_there_stays_unknown_to_outsiders(world):
    """The members API names former authors of what the caller reads, nothing more."""
    from houses.membership import add_member, remove_member
    from houses.models import Membership
    from tests.factories import make_user

    zed = make_user("zed")
    add_member(world.house, zed)
    secret = privacy.start_private(world.house, "Quiet", world.owner.agent, [zed.agent.pk])
    post(world, zed, "my last words", secret)
    remove_member(Membership.objects.get(house=world.house, user=zed))

    def former(user):
        answer = get(world, user, "/api/houses/h/members", authors=zed.agent.pk).json()
        return [row["agentId"] for row in answer["former"]]

    assert former(world.owner) == [zed.agent.pk]
    assert former(world.author) == []
