"""A muted house stays silent (issue 34): no push, no email, no desktop notice from any of
its threads, while its items still fill the inbox; a thread followed on purpose (every
message) still speaks; unmuting brings it back. Real notifier, loopback push service,
Django's locmem email."""

import pytest
from django.core import mail

from houses.yours_socket import notice_fragment
from notify.bell import bell_context
from notify.models import HouseNotify, InboxItem, Notice, ThreadNotify
from tests.integration.notify.test_notify import devices as devices  # noqa: F401 (fixture)
from tests.integration.notify.test_notify import post, tick

pytestmark = pytest.mark.django_db(transaction=True)


def mute(world, user, mode="mute"):
    response = world.client_for(user).post(f"/houses/{world.house.slug}/notify", {"mode": mode})
    assert response.status_code == 302, response.content
    return response


def test_a_muted_house_pushes_nothing_but_a_thread_followed_on_purpose(
    world, push_service, devices
):
    owner = world.client_for(world.owner)
    mute(world, world.member)
    assert HouseNotify.objects.filter(user=world.member, house=world.house).exists()
    said = post(owner, world.thread, "@mia a mention in a muted house")
    tick()
    assert push_service.to(devices["mia-phone"]) == []
    assert push_service.to(devices["mia-laptop"]) == []
    # Still a record: the inbox lists it and the bell counts it.
    assert InboxItem.objects.filter(user=world.member, entry_id=said).exists()

    ThreadNotify.objects.create(user=world.member, thread=world.other_thread, mode="all")
    post(owner, world.other_thread, "no mention, but Mia follows this thread")
    tick()
    assert len(push_service.to(devices["mia-phone"])) == 1

    mute(world, world.member, mode="")
    assert not HouseNotify.objects.filter(user=world.member).exists()
    post(owner, world.thread, "@mia unmuted now")
    tick()
    assert len(push_service.to(devices["mia-phone"])) == 2


def test_email_queued_before_the_house_was_muted_is_not_sent(world, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NOTIFY_EMAIL_DELAY_S = 3600
    world.member.email = "mia@example.test"
    world.member.save()
    post(world.client_for(world.owner), world.thread, "@mia due in an hour")
    tick()
    assert Notice.objects.filter(channel="email", state="queued").count() == 1
    mute(world, world.member)
    Notice.objects.update(due_at=Notice.objects.first().created_at)
    tick()
    assert mail.outbox == []
    assert set(Notice.objects.filter(channel="email").values_list("state", flat=True)) == {"gone"}


def test_a_muted_house_is_not_emailed_and_the_open_pages_notice_is_silent(world, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NOTIFY_EMAIL_DELAY_S = 0
    world.member.email = "mia@example.test"
    world.member.save()
    mute(world, world.member)
    said = post(world.client_for(world.owner), world.thread, "@mia quiet please")
    tick()
    tick()
    assert mail.outbox == []
    notice = notice_fragment(world.member, said, current=world.other_thread.id)
    assert f'data-entry="{said}"' in notice and "data-silent" in notice
    bell = bell_context(world.member, world.thread)
    assert (bell["state"], bell["effective"]) == ("Muted", "nothing")
    assert "muted this house" in bell["modes"][0][2]
    # Olive didn't mute it: her notice for Mia's mention is not silent.
    back = post(world.client_for(world.member), world.thread, "@olive back to you")
    assert "data-silent" not in notice_fragment(world.owner, back, current=world.other_thread.id)


def test_the_house_page_and_settings_offer_mute_and_unmute(world):
    client = world.client_for(world.member)
    page = client.get(f"/houses/{world.house.slug}/").content.decode()
    assert ">Mute house</button>" in page
    mute(world, world.member)
    page = client.get(f"/houses/{world.house.slug}/").content.decode()
    assert ">Unmute house</button>" in page and 'aria-pressed="true"' in page
    settings_page = client.get("/account/notifications/").content.decode()
    assert f'href="/houses/{world.house.slug}/"' in settings_page
    assert f'action="/houses/{world.house.slug}/notify"' in settings_page
    response = client.post(f"/houses/{world.house.slug}/notify", {"mode": "", "next": "settings"})
    assert response.status_code == 302 and response.url == "/account/notifications/"
    assert not HouseNotify.objects.exists()


def test_only_a_member_mutes_a_house_and_only_with_a_known_choice(world):
    stranger = world.client_for(world.stranger)
    assert stranger.post(f"/houses/{world.house.slug}/notify", {"mode": "mute"}).status_code == 404
    assert stranger.post("/houses/nowhere/notify", {"mode": "mute"}).status_code == 404
    member = world.client_for(world.member)
    assert member.post(f"/houses/{world.house.slug}/notify", {"mode": "all"}).status_code == 400
    assert member.get(f"/houses/{world.house.slug}/notify").status_code == 405
    assert not HouseNotify.objects.exists()


def side_row(html: str, row_id: str) -> str:
    start = html.index(f'id="{row_id}"')
    return html[html.rindex("<li", 0, start) : html.index("</li>", start)]


def test_the_sidebar_greys_what_is_muted_and_keeps_its_badges(world):
    from tests.factories import make_house
    from threads.lifecycle import create_thread

    elsewhere = make_house("lh", owner=world.member, name="Lighthouse")
    create_thread(house=elsewhere, title="Beacon", by=world.member.agent)
    client = world.client_for(world.member)
    post(world.client_for(world.owner), world.other_thread, "@mia still counted")
    page = client.get(f"/threads/{world.thread.id}/").content.decode()
    assert "is-muted" not in page
    ThreadNotify.objects.create(user=world.member, thread=world.other_thread, mode="mute")
    page = client.get(f"/threads/{world.thread.id}/").content.decode()
    row = side_row(page, f"side-{world.other_thread.id}")
    assert "is-muted" in row and "(muted)" in row
    assert "mention-badge" in row and "side-count" in row  # muted, not hidden
    assert "is-muted" not in side_row(page, f"side-{world.thread.id}")
    # The whole house muted: every row greyed but one followed on purpose; from the other
    # house's page, the house is greyed among "Other houses".
    ThreadNotify.objects.all().delete()
    ThreadNotify.objects.create(user=world.member, thread=world.thread, mode="all")
    mute(world, world.member)
    page = client.get(f"/threads/{world.thread.id}/").content.decode()
    assert "is-muted" in side_row(page, f"side-{world.other_thread.id}")
    assert "is-muted" not in side_row(page, f"side-{world.thread.id}")
    page = client.get("/houses/lh/").content.decode()
    houses = page[page.index('id="side-houses"') :]
    houses = houses[: houses.index("</div>")]
    assert "is-muted" in houses and "(muted)" in houses
    # The thread page's bell says so.
    bell = client.get(f"/threads/{world.other_thread.id}/").content.decode()
    bell = bell[bell.index('id="thread-notify"') :]
    assert bell[: bell.index(">")].endswith("data-muted")
