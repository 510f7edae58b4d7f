"""Behaviours of the embedded server beyond the conformance suite (real HTTP, real DB)."""

import socket
import threading
import uuid
from urllib.parse import urlsplit

import httpx
import pytest

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def client(embedded_ds_url):
    with httpx.Client(base_url=embedded_ds_url, timeout=30) as client:
        yield client


@pytest.fixture
def stream(client):
    path = f"/v1/stream/test/{uuid.uuid4().hex}"
    assert client.put(path, headers=JSON).status_code == 201
    return path


def tail(client, path) -> str:
    return client.head(path).headers["Stream-Next-Offset"]


def test_json_round_trip_flattens_one_level(client, stream):
    first = client.post(stream, json={"n": 1, "text": "é"})
    second = client.post(stream, json=[{"n": 2}, [3, 4], None])
    assert first.status_code == second.status_code == 204
    assert first.headers["Stream-Next-Offset"] < second.headers["Stream-Next-Offset"]
    read = client.get(stream, params={"offset": "-1"})
    assert read.json() == [{"n": 1, "text": "é"}, {"n": 2}, [3, 4], None]
    assert read.headers["Stream-Up-To-Date"] == "true"
    resumed = client.get(stream, params={"offset": first.headers["Stream-Next-Offset"]})
    assert resumed.json() == [{"n": 2}, [3, 4], None]


def test_producer_retry_after_dropped_connection_appends_once(client, stream, embedded_ds_url):
    body = b'{"once": true}'
    headers = {"Producer-Id": "p1", "Producer-Epoch": "0", "Producer-Seq": "0", **JSON}
    # Send the request and hang up without reading the answer, as a crashed client would.
    address = urlsplit(embedded_ds_url)
    raw = (
        f"POST {stream} HTTP/1.1\r\nHost: {address.netloc}\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    with socket.create_connection((address.hostname, address.port)) as sock:
        sock.sendall(raw)
        sock.recv(1)  # the server has answered: the append is committed
    retry = client.post(stream, content=body, headers=headers)
    assert retry.status_code == 204  # a duplicate, not a second append
    assert retry.headers["Producer-Seq"] == "0"
    assert client.get(stream, params={"offset": "-1"}).json() == [{"once": True}]
    following = client.post(stream, content=body, headers={**headers, "Producer-Seq": "1"})
    assert following.status_code == 200


def test_batch_with_an_invalid_item_appends_nothing(client, stream):
    before = tail(client, stream)
    response = client.post(stream, content=b'[{"ok": 1}, {"broken": }, {"ok": 2}]', headers=JSON)
    assert response.status_code == 400
    assert tail(client, stream) == before
    assert client.get(stream, params={"offset": "-1"}).json() == []


BAD_APPENDS = [
    ("wrong content type", {"Content-Type": "text/plain"}, b"hello", 409),
    ("empty body", JSON, b"", 400),
    ("empty array", JSON, b"[]", 400),
    ("invalid JSON", JSON, b"{nope", 400),
    ("partial producer headers", {**JSON, "Producer-Id": "p"}, b"{}", 400),
    ("bad producer epoch", {**JSON, "Producer-Id": "p", "Producer-Epoch": "-1",
                            "Producer-Seq": "0"}, b"{}", 400),
    ("oversized body", JSON, b'"' + b"x" * (9 * 1024 * 1024) + b'"', 413),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "headers", "body", "status"), BAD_APPENDS, ids=[case[0] for case in BAD_APPENDS]
)
def test_bad_append_is_rejected_and_appends_nothing(client, stream, case, headers, body, status):
    before = tail(client, stream)
    response = client.post(stream, content=body, headers=headers)
    assert response.status_code == status, case
    assert response.text  # a short reason
    assert tail(client, stream) == before


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Stream-TTL": "1.5"}, 400),
        ({"Stream-TTL": "01"}, 400),
        ({"Stream-TTL": "-1"}, 400),
        ({"Stream-Expires-At": "tomorrow"}, 400),
        ({"Stream-TTL": "60", "Stream-Expires-At": "2099-01-01T00:00:00Z"}, 400),
        ({"Stream-Forked-From": "/v1/stream/does-not-exist"}, 404),
    ],
)
def test_bad_create_is_rejected_and_creates_nothing(client, headers, status):
    path = f"/v1/stream/test/{uuid.uuid4().hex}"
    assert client.put(path, headers={**JSON, **headers}).status_code == status
    assert client.head(path).status_code == 404


@pytest.mark.parametrize("offset", ["abc", "1_", "_1", "0_0_0", "now1", ""])
def test_malformed_read_offset_is_400(client, stream, offset):
    assert client.get(stream, params={"offset": offset}).status_code == 400


def test_a_nul_in_a_stream_name_is_400_over_the_wire(client):
    path = f"/v1/stream/test/{uuid.uuid4().hex}%00y"
    response = client.put(path, headers=JSON)
    assert response.status_code == 400
    assert "location" not in response.headers


def test_location_never_echoes_the_request_host(client, embedded_ds_url):
    path = f"/v1/stream/test/{uuid.uuid4().hex}"
    response = client.put(path, headers={**JSON, "Host": "attacker.example"})
    assert response.status_code == 201
    assert response.headers["Location"] == embedded_ds_url + path


def test_offsets_strictly_increase_under_concurrent_appends(client, stream, embedded_ds_url):
    offsets: list[str] = []
    lock = threading.Lock()

    def writer(worker: int) -> None:
        with httpx.Client(base_url=embedded_ds_url, timeout=30) as own:
            for n in range(20):
                response = own.post(stream, json={"w": worker, "n": n})
                assert response.status_code == 204
                with lock:
                    offsets.append(response.headers["Stream-Next-Offset"])

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(offsets)) == len(offsets) == 160
    messages = client.get(stream, params={"offset": "-1"}).json()
    assert len(messages) == 160
    for worker in range(8):  # each writer's own appends stay in order
        assert [m["n"] for m in messages if m["w"] == worker] == list(range(20))
    # Every reported offset is a real boundary: reading from it resumes after that message.
    for offset in sorted(offsets)[:5]:
        rest = client.get(stream, params={"offset": offset}).json()
        assert len(rest) == 160 - sorted(offsets).index(offset) - 1
