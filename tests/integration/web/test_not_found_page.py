"""Under DEBUG (``make run``) a missing page is the site's own 404 page, not Django's list of
every URL; ``DEBUG_404`` brings Django's back."""

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/no-such-page/", "/threads/nope/"])
def test_debug_shows_the_sites_own_404_page(client, settings, path):
    from tests.factories import make_user

    settings.DEBUG = True
    client.force_login(make_user("olive"))
    response = client.get(path)
    html = response.content.decode()
    assert response.status_code == 404
    assert "Nothing here" in html and "Back to your houses" in html
    assert "URLconf" not in html and "admin/" not in html


def test_debug_404_asks_for_djangos_page(client, settings):
    settings.DEBUG, settings.DEBUG_404 = True, True
    response = client.get("/no-such-page/")
    assert response.status_code == 404 and "URLconf" in response.content.decode()


def test_api_404s_stay_json_under_debug(client, settings):
    settings.DEBUG = True
    response = client.get("/api/threads/nope")
    assert response.status_code in (401, 404)
    assert response["Content-Type"].startswith("application/json")
