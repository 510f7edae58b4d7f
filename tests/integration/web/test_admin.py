"""The admin: thread status, the guarded recompute, raw entries page by page, house rollups."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from threads.models import Thread

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin_client_(world):
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.force_login(admin)
    return client


def test_thread_list_shows_status_columns_and_filters(world, admin_client_):
    html = admin_client_.get("/admin/threads/thread/?status__exact=idle").content.decode()
    assert "Plans" in html and "status_rev" in html.lower().replace(" ", "_")


def test_recompute_status_writes_the_fold_through_the_rev_guard(world, admin_client_):
    world.client_for(world.member).post(f"/api/threads/{world.thread.id}/entries", {"text": "hi"})
    Thread.objects.filter(pk=world.thread.pk).update(status="done", status_message="stale")
    before = Thread.objects.get(pk=world.thread.pk).status_rev
    response = admin_client_.post(
        "/admin/threads/thread/",
        {"action": "recompute_status", "_selected_action": [world.thread.pk]},
        follow=True,
    )
    assert "Recomputed 1 thread." in response.content.decode()
    thread = Thread.objects.get(pk=world.thread.pk)
    # The message waits for the director's pass: idle, saying so.
    assert (thread.status, thread.status_rev) == ("idle", before + 1)
    assert thread.status_message.startswith("Deciding who answers")


def test_raw_entries_show_tombstones_and_offsets(world, admin_client_):
    client = world.client_for(world.member)
    posted = client.post(f"/api/threads/{world.thread.id}/entries", {"text": "gone"}).json()
    client.delete(f"/api/threads/{world.thread.id}/entries/{posted['entry']['id']}")
    html = admin_client_.get(f"/admin/threads/thread/{world.thread.id}/entries/").content.decode()
    assert "signal.entry.deleted" in html
    assert "(deleted)" in html and "gone" in html
    assert 'class="next-offset"' in html
    page = admin_client_.get(
        f"/admin/threads/thread/{world.thread.id}/entries/", {"offset": posted["offset"]}
    ).content.decode()
    assert "signal.entry.deleted" in page and "signal.thread.created" not in page


def test_house_list_has_rollup_columns(world, admin_client_):
    Thread.objects.filter(pk=world.thread.pk).update(status="working", status_message="x")
    html = admin_client_.get("/admin/houses/house/").content.decode()
    assert "column-n_working" in html and world.thread.id in html


def test_thread_list_shows_dates_and_names_not_epoch_ms_and_ids(world, admin_client_):
    from threads.models import Thread

    world.client_for(world.member).post(
        f"/api/threads/{world.thread.id}/entries", {"text": "@helper hi"}
    )
    Thread.objects.filter(pk=world.thread.pk).update(
        last_entry_ts=1_767_225_600_000, status_message=f"{world.bot.id} is thinking"
    )
    html = admin_client_.get("/admin/threads/thread/").content.decode()
    assert "column-last_entry" in html and "1767225600000" not in html
    assert "1 Jan 2026, 00:00" in html
    assert f"Helper (@helper) {world.bot.id} is thinking" in html
    change = admin_client_.get(f"/admin/threads/thread/{world.thread.id}/change/")
    assert change.status_code == 200
    text = change.content.decode()
    assert "Last message" in text and "@helper hi" in text


def test_thread_list_filters_by_status_and_house_and_searches_titles(world, admin_client_):
    html = admin_client_.get("/admin/threads/thread/").content.decode()
    assert "?status__exact=idle" in html and f"?house__id__exact={world.house.pk}" in html
    found = admin_client_.get("/admin/threads/thread/", {"q": "Plan"}).content.decode()
    assert "Plans" in found and ">Other<" not in found


def test_raw_entries_fold_long_json_and_name_authors(world, admin_client_):
    client = world.client_for(world.member)
    client.post(f"/api/threads/{world.thread.id}/entries", {"text": "short"})
    client.post(f"/api/threads/{world.thread.id}/entries", {"text": "long " * 100})
    response = admin_client_.get(f"/admin/threads/thread/{world.thread.id}/entries/")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count("<details>") == 1 and 'class="entry-json"' in html
    assert 'mia <span class="handle">@mia</span>' in html
    assert 'style="' not in html.split('id="content"')[1]
    assert "arbe/admin.css" in html


def test_invites_are_listed_in_the_admin(world, admin_client_):
    from houses.invites import make_invite

    invite, raw = make_invite(world.house, world.owner)
    response = admin_client_.get("/admin/houses/houseinvite/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "column-expires_at" in html and "column-joined_count" in html and "olive" in html
    assert raw not in html
    change = admin_client_.get(f"/admin/houses/houseinvite/{invite.pk}/change/")
    assert change.status_code == 200 and raw not in change.content.decode()


def test_the_admin_says_replied_as_the_pages_do(world, admin_client_):
    Thread.objects.filter(pk=world.thread.pk).update(status="done")
    html = admin_client_.get("/admin/threads/thread/").content.decode()
    assert ">replied<" in html  # the list's status column and its filter
    assert ">Done<" not in html
    html = admin_client_.get(f"/admin/threads/thread/{world.thread.pk}/change/").content.decode()
    assert "replied" in html and ">Done<" not in html
