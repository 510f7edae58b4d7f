"""``/healthz``, ``/readyz``, ``/metrics`` and request ids through the site's ASGI app, and a
worker's health port (ops/asgi.py, ops/endpoints.py, ops/probe_server.py)."""

import asyncio

import httpx
import pytest

from ops import probe_server
from ops.metrics import REGISTRY
from tests.peers.ports import free_port

pytestmark = pytest.mark.django_db(transaction=True)
TOKEN = "metrics-token-for-tests-0123456789"


@pytest.fixture
def client():
    from arbe_site.asgi import application

    transport = httpx.ASGITransport(app=application)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


async def test_healthz_answers_without_touching_anything(client):
    answer = await client.get("/healthz", headers={"Host": "10.1.2.3"})  # a probe by IP
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "role": "web"}
    assert answer.headers["cache-control"] == "no-store"


async def test_readyz_names_each_check_and_nothing_else(client):
    answer = await client.get("/readyz")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "ready" and body["failing"] == []
    assert set(body["checks"]) == {"database", "channel_layer", "streams"}
    assert all(set(check) == {"ok", "ms"} for check in body["checks"].values())


async def test_readyz_is_503_naming_a_dependency_that_is_down(client, settings):
    settings.DURABLE_STREAMS_URL = f"http://127.0.0.1:{free_port()}"  # nobody listens
    answer = await client.get("/readyz")
    assert answer.status_code == 503
    body = answer.json()
    assert body["failing"] == ["streams"]
    assert body["checks"]["streams"] == {
        "ok": False,
        "error": "ConnectError",
        "ms": body["checks"]["streams"]["ms"],
    }
    assert "127.0.0.1" not in answer.text  # no address, no DSN, no secret


async def test_metrics_is_404_unless_a_token_is_set_and_given(client, settings):
    settings.METRICS_TOKEN = ""
    assert (await client.get("/metrics")).status_code == 404
    assert (await client.get("/metrics", headers={"Authorization": "Bearer "})).status_code == 404
    settings.METRICS_TOKEN = TOKEN
    assert (await client.get("/metrics")).status_code == 404
    wrong = {"Authorization": "Bearer " + TOKEN[:-1] + "x"}
    assert (await client.get("/metrics", headers=wrong)).status_code == 404
    answer = await client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200
    assert "arbe_http_requests_total" in answer.text
    assert answer.headers["content-type"].startswith("text/plain")


async def test_requests_are_counted_by_route_name_never_by_path(client):
    labels = {"route": "login", "method": "GET", "status": "200"}
    timed = {"route": "login"}
    before = REGISTRY.get_sample_value("arbe_http_requests_total", labels) or 0
    took = REGISTRY.get_sample_value("arbe_http_request_duration_seconds_count", timed) or 0
    assert (await client.get("/login/")).status_code == 200
    assert REGISTRY.get_sample_value("arbe_http_requests_total", labels) == before + 1
    assert REGISTRY.get_sample_value("arbe_http_request_duration_seconds_count", timed) == took + 1
    await client.get("/join/secret-invite-token-abc")
    routes = {s.labels.get("route") for m in REGISTRY.collect() for s in m.samples}
    assert "join" in routes
    assert not any("secret-invite" in (r or "") for r in routes)


async def test_a_sane_request_id_is_answered_back_and_anything_else_replaced(client):
    answer = await client.get("/login/", headers={"X-Request-ID": "lb-0123456789abcdef"})
    assert answer.headers["x-request-id"] == "lb-0123456789abcdef"
    for bad in ("short", "has space in it ok", "x" * 200, '{"json":1}'):
        answer = await client.get("/login/", headers={"X-Request-ID": bad})
        assert answer.headers["x-request-id"] != bad
        assert len(answer.headers["x-request-id"]) == 32
    fresh = await client.get("/login/")
    assert len(fresh.headers["x-request-id"]) == 32


async def test_a_workers_health_port_answers_the_same_with_the_lease_table(settings):
    settings.METRICS_TOKEN = TOKEN
    port = free_port()
    server = await probe_server.serve("127.0.0.1", port)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as worker:
            ready = await worker.get("/readyz")
            assert ready.status_code == 200, ready.text
            assert set(ready.json()["checks"]) == {"database", "channel_layer", "streams", "leases"}
            assert ready.json()["role"] == "worker"
            assert (await worker.get("/healthz")).json() == {"status": "ok", "role": "worker"}
            assert (await worker.get("/metrics")).status_code == 404
            auth = {"Authorization": f"Bearer {TOKEN}"}
            assert "arbe_replies_total" in (await worker.get("/metrics", headers=auth)).text
            assert (await worker.get("/anything")).status_code == 404
            assert (await worker.post("/readyz")).status_code == 405
        # A head that never ends is cut off, not held.
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /readyz HTTP/1.1\r\n" + b"X-Long: " + b"a" * 20_000)
        await writer.drain()
        head = await asyncio.wait_for(reader.read(), 10)
        assert head.startswith(b"HTTP/1.1 400")
        writer.close()
    finally:
        server.close()
        await server.wait_closed()


async def test_labels_stay_bounded_whatever_a_client_sends(client):
    await client.request("BREW", "/login/")
    await client.get(f"/no/such/page/{'x' * 50}")
    labels = {
        (s.labels.get("route"), s.labels.get("method"))
        for m in REGISTRY.collect()
        if m.name == "arbe_http_requests"
        for s in m.samples
    }
    assert ("login", "other") in labels and ("unmatched", "GET") in labels
    assert not any(method == "BREW" or "xxxx" in route for route, method in labels)
