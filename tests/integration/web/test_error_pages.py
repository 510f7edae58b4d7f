"""Error pages in the site's layout, with a way back; the favicon."""

import re

import pytest
from django.test import RequestFactory

from streams.errors import TransportError

pytestmark = pytest.mark.django_db(transaction=True)


def assert_in_layout(html: str):
    assert '<header class="topbar">' in html and 'href="/"' in html
    assert "Back to your houses" in html
    assert 'rel="icon" href="/static/arbe/favicon.svg"' in html


def test_a_member_on_the_members_page_gets_a_403_page_that_says_why(world):
    response = world.client_for(world.member).get(f"/houses/{world.house.slug}/members/")
    html = response.content.decode()
    assert response.status_code == 403
    assert_in_layout(html)
    assert "Not allowed" in html and "Only owners of the house may do that." in html


def test_unknown_pages_and_other_peoples_houses_get_the_same_404_page(world):
    client = world.client_for(world.stranger)
    missing = client.get("/houses/no-such-house/")
    other = client.get(f"/houses/{world.house.slug}/")
    assert missing.status_code == other.status_code == 404
    # Per-response values: CSRF tokens and the CSP nonce.
    token = re.compile(r'("x-csrftoken": "|name="csrfmiddlewaretoken" value="|nonce=")[^"]*')
    assert token.sub("", missing.content.decode()) == token.sub("", other.content.decode())
    assert_in_layout(missing.content.decode())


def test_the_500_page_renders_without_a_request_context(world):
    from django.views.defaults import server_error

    response = server_error(RequestFactory().get("/"))
    html = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in html and "Back to your houses" in html


def test_a_page_the_stream_server_cannot_serve_is_a_503_page(world, monkeypatch):
    import threads.reading

    def down(*args, **kwargs):
        raise TransportError("connect failed to http://127.0.0.1:1/v1/stream/secret-path")

    monkeypatch.setattr(threads.reading, "read_entries", down)
    response = world.client_for(world.member).get(f"/threads/{world.thread.id}/")
    html = response.content.decode()
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "Back in a moment" in html and "secret-path" not in html
    assert_in_layout(html)


def test_the_favicon_is_served_and_ico_requests_find_it(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/arbe/favicon.svg"
