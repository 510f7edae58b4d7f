"""Anonymous callers get 401 on every API route, with every method, whether what they name
exists or not: the same answer, given before anything is looked up. The routes are read
from the URL configuration, so a new one is covered without being listed here."""

import re

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db(transaction=True)
METHODS = ("get", "post", "patch", "delete")


def api_routes(patterns=None, prefix=""):
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from api_routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and route.startswith("api/"):
            yield route


def fill(route: str, values: dict[str, str]) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values[m.group(1)], route)


def answers(paths):
    """Each path with each method, as an anonymous caller (async: the stream proxies are)."""

    async def go():
        client, out = AsyncClient(), []
        for path in paths:
            for method in METHODS:
                response = await getattr(client, method)(path)
                out.append((method, path, response))
        return out

    return async_to_sync(go)()


def test_the_routes_cover_every_family():
    families = {route.split("/")[1] for route in api_routes()}
    assert families == {"threads", "houses", "stream", "search", "notify", "inbox"}
    assert len(list(api_routes())) >= 17


def test_anonymous_is_401_on_every_api_route_whether_or_not_it_exists(world):
    real = {
        "thread_id": world.thread.id,
        "entry_id": "e_1",
        "slug": world.house.slug,
        "username": world.member.username,
        "handle": world.bot.handle,
        "name": world.thread.stream_name,
        "agent_id": world.member.agent.id,
    }
    made_up = dict.fromkeys(real, "nope") | {"name": "arbe-thread-nope"}
    routes = list(api_routes())
    seen = {}
    for values in (real, made_up):
        for method, path, response in answers([fill(r, values) for r in routes]):
            assert response.status_code == 401, (method, path, response.content)
            assert response["Content-Type"] == "application/json"
            assert response["WWW-Authenticate"] == 'Bearer realm="arbe"'
            seen.setdefault(response.content, []).append((method, path))
    assert list(seen) == [b'{"error":"Sign in or send an API token."}']


def test_a_signed_in_non_member_still_gets_404(world):
    client = world.token_client(world.stranger)
    for path in (f"/api/threads/{world.thread.id}", f"/api/threads/{world.thread.id}/now"):
        assert client.get(path).status_code == 404
    assert client.get("/api/houses/h").status_code == 404
