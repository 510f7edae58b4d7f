"""Site admins may read a private thread in the Django admin, and each read is recorded
(``threads.admin_reads``); a house owner who isn't in it reads nothing of it."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from threads import privacy
from threads.models import AdminRead

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin_client():
    root = get_user_model().objects.create_superuser("root", "root@example.com", "pw-for-tests")
    client = Client()
    client.force_login(root)
    return client


def test_each_admin_read_of_a_private_thread_is_recorded(world, admin_client):
    secret = privacy.start_private(world.house, "Salaries", world.member.agent, [])
    for path in (
        f"/admin/threads/thread/{secret.pk}/change/",
        f"/admin/threads/thread/{secret.pk}/entries/",
    ):
        assert admin_client.get(path).status_code == 200
    reads = list(
        AdminRead.objects.order_by("at", "pk").values_list("username", "thread_id", "page")
    )
    assert reads == [("root", secret.pk, "thread"), ("root", secret.pk, "entries")]
    # An open thread's pages are the operator's everyday work: not recorded.
    assert admin_client.get(f"/admin/threads/thread/{world.thread.pk}/change/").status_code == 200
    assert AdminRead.objects.count() == 2
    # The record is shown, and can't be edited, added to or deleted from the admin.
    listing = admin_client.get("/admin/threads/adminread/").content.decode()
    assert secret.pk in listing and "Salaries" in listing
    row = AdminRead.objects.first()
    assert admin_client.get("/admin/threads/adminread/add/").status_code == 403
    assert (
        admin_client.post(f"/admin/threads/adminread/{row.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    assert AdminRead.objects.count() == 2


def test_a_house_owner_outside_it_reads_nothing_of_it(world):
    secret = privacy.start_private(world.house, "Salaries", world.member.agent, [])
    owner = world.client_for(world.owner)
    assert owner.get(f"/threads/{secret.pk}/").status_code == 404
    assert owner.get(f"/api/threads/{secret.pk}/now").status_code == 404
    assert "Salaries" not in owner.get("/houses/h/").content.decode()
    assert owner.get("/admin/threads/thread/").status_code == 302  # not a site admin
