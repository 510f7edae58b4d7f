"""The Content-Security-Policy: every page carries it; no inline script, style or handler."""

import re

import pytest
from django.contrib.auth import get_user_model

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT_TAG = re.compile(r"<script\b([^>]*)>", re.I)


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {d.split()[0]: d.split()[1:] for d in header.split("; ")}


def assert_no_inline_code(html: str, nonce: str | None):
    for attrs in SCRIPT_TAG.findall(html):
        if "src=" in attrs or 'type="application/json"' in attrs:
            continue  # external files and data blocks don't run inline code
        assert nonce and f'nonce="{nonce}"' in attrs, f"inline script without the nonce: {attrs}"
    assert not re.search(r"<style\b", html, re.I)
    assert not re.search(r"<[a-z][^>]*\sstyle=", html, re.I)
    assert not re.search(r"<[a-z][^>]*\s(on[a-z]+|hx-on[:\-][^=\s]*)=", html, re.I)


def test_the_thread_page_carries_the_policy_and_no_inline_code(world):
    client = world.client_for(world.member)
    client.post(f"/api/threads/{world.thread.id}/entries", {"text": "<b style='x'>hi</b>"})
    response = client.get(f"/threads/{world.thread.id}/")
    directives = policy(response)
    assert directives["default-src"] == ["'self'"]
    assert directives["style-src"] == ["'self'"]
    assert directives["img-src"] == ["'self'"]
    assert directives["connect-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["form-action"] == ["'self'"]
    script_src = directives["script-src"]
    assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src
    assert script_src[0] == "'self'" and script_src[1].startswith("'nonce-")
    nonce = script_src[1][len("'nonce-") : -1]
    html = response.content.decode()
    assert_no_inline_code(html, nonce)
    assert '"allowEval":false' in html and '"includeIndicatorStyles":false' in html


@pytest.mark.parametrize(
    "path",
    ["/", "/houses/h/", "/houses/h/members/"]
    + ["/account/tokens/", "/account/", "/account/password/"],
)
def test_other_pages_carry_it_too(world, path):
    response = world.client_for(world.owner).get(path)
    assert response.status_code == 200
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert_no_inline_code(response.content.decode(), None)


def test_the_admin_has_no_inline_code(world):
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client = world.client_for(admin)
    for path in (
        "/admin/",
        "/admin/threads/thread/",
        f"/admin/threads/thread/{world.thread.id}/change/",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        assert "Content-Security-Policy" in response
        html = response.content.decode()
        for attrs in SCRIPT_TAG.findall(html):
            assert "src=" in attrs or "application/json" in attrs, (path, attrs)
