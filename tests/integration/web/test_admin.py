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
    assert "Recomputed 1 thread(s)." in response.content.decode()
    thread = Thread.objects.get(pk=world.thread.pk)
    assert thread.status == "working" and thread.status_rev == before + 1


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
    world.client_for(world.member).post(f"/api/threads/{world.thread.id}/entries", {"text": "x"})
    html = admin_client_.get("/admin/houses/house/").content.decode()
    assert "column-n_working" in html and world.thread.id in html
