"""The sync service client against real servers: every operation and every error mapping."""

import threading
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from streams import errors
from streams.client import DurableStreamClient
from tests.integration.streams_client.conftest import make_client
from tests.peers.ports import free_port

pytestmark = pytest.mark.timeout(20, func_only=True)


def appended_later(fn, delay: float = 0.2) -> threading.Timer:
    """Run ``fn`` on another thread shortly, so a live read is already waiting for it."""
    timer = threading.Timer(delay, fn)
    timer.start()
    return timer


# create / head ------------------------------------------------------------------------


def test_create_and_head(client, name):
    created = client.create(name, ttl=3600)
    assert created.created and created.content_type == "application/json"
    info = client.head(name)
    assert info.next_offset == created.next_offset
    assert (info.closed, info.ttl, info.content_type) == (False, 3600, "application/json")
    # The same config again: 200, not created.
    assert client.create(name, ttl=3600).created is False


def test_create_with_expiry_body_and_closed(client, name):
    expires = datetime.now(UTC) + timedelta(hours=1)
    created = client.create(name, expires_at=expires, body=[{"a": 1}, {"b": 2}], closed=True)
    assert created.created and created.closed
    info = client.head(name)
    assert info.closed and info.expires_at and info.ttl is None
    result = client.catch_up(name)
    assert result.json() == [{"a": 1}, {"b": 2}]
    assert result.closed and result.up_to_date


def test_create_other_type(client, name):
    client.create(name, content_type="text/plain", body="hello ")
    client.append(name, "world", content_type="text/plain")
    result = client.catch_up(name)
    assert result.data == b"hello world" and result.messages is None


def test_create_conflict_is_stream_exists(client, name):
    client.create(name)
    with pytest.raises(errors.StreamExists) as caught:
        client.create(name, content_type="text/plain")
    assert caught.value.status == 409


def test_ttl_and_expiry_together_refused(client, name):
    with pytest.raises(ValueError):
        client.create(name, ttl=10, expires_at="2030-01-01T00:00:00Z")


# append / read -------------------------------------------------------------------------


def test_append_and_read_from_offset(client, name):
    start = client.create(name).next_offset
    first = client.append(name, {"n": 1})
    second = client.append(name, {"n": 2})
    assert first.next_offset and second.next_offset and not first.duplicate
    assert client.read(name).json() == [{"n": 1}, {"n": 2}]
    page = client.read(name, first.next_offset)
    assert page.json() == [{"n": 2}] and page.next_offset == second.next_offset
    assert page.up_to_date and not page.closed
    assert client.read(name, start).messages == (b'{"n":1}', b'{"n":2}')
    # At the tail: no messages, same offset.
    tail = client.read(name, second.next_offset)
    assert tail.messages == () and tail.next_offset == second.next_offset and tail.up_to_date


def test_read_now_is_the_tail(client, name):
    client.create(name, body=[{"n": 1}])
    now = client.read(name, "now")
    assert now.messages == () and now.up_to_date
    assert now.next_offset == client.head(name).next_offset


def test_append_raw_json_bytes(client, name):
    client.create(name)
    client.append(name, b'{"raw":true}')
    assert client.catch_up(name).json() == [{"raw": True}]


def test_batch_appends_every_message(client, name):
    client.create(name)
    result = client.append_batch(name, [{"a": 1}, [1, 2], b'"raw"'])
    assert client.catch_up(name).json() == [{"a": 1}, [1, 2], "raw"]
    assert result.next_offset == client.head(name).next_offset


def test_batch_is_all_or_nothing(client, name):
    client.create(name, body=[{"before": True}])
    with pytest.raises(errors.BadRequest):
        client.append_batch(name, [{"ok": 1}, b"{not json"])
    assert client.catch_up(name).json() == [{"before": True}]


def test_empty_batch_refused_before_sending(client, name):
    with pytest.raises(ValueError):
        client.append_batch(name, [])


def test_stream_seq(client, name):
    client.create(name)
    client.append(name, {"n": 1}, seq="0001")
    client.append(name, {"n": 2}, seq="0002")
    with pytest.raises(errors.SeqConflict):
        client.append(name, {"n": 3}, seq="0002")
    assert client.catch_up(name).json() == [{"n": 1}, {"n": 2}]


def test_content_type_mismatch_is_a_conflict(client, name):
    client.create(name)
    with pytest.raises(errors.SeqConflict):
        client.append(name, "text", content_type="text/plain")


def test_offsets_are_url_encoded(client, name):
    client.create(name)
    # Not an offset the server minted: it must reach the server intact and be refused there.
    with pytest.raises(errors.BadRequest):
        client.read(name, "1 2&x=3")


# close / delete --------------------------------------------------------------------------


def test_close_is_eof_and_final(client, name):
    client.create(name, body=[{"n": 1}])
    closed = client.close_stream(name)
    assert closed.closed and closed.next_offset == client.head(name).next_offset
    assert client.close_stream(name).closed  # close-only again: idempotent
    with pytest.raises(errors.StreamClosed) as caught:
        client.append(name, {"n": 2})
    assert caught.value.final_offset == closed.next_offset
    result = client.catch_up(name)
    assert result.closed and result.json() == [{"n": 1}]
    assert client.read(name, closed.next_offset).closed


def test_close_with_a_last_message(client, name):
    client.create(name)
    client.close_stream(name, {"last": True})
    result = client.catch_up(name)
    assert result.json() == [{"last": True}] and result.closed


def test_delete(client, name):
    client.create(name)
    client.delete(name)
    with pytest.raises(errors.StreamNotFound):
        client.head(name)
    with pytest.raises(errors.StreamNotFound):
        client.delete(name)
    with pytest.raises(errors.StreamNotFound):
        client.append(name, {"n": 1})


# live reads -------------------------------------------------------------------------------


def test_long_poll_wakes_on_append(client, name):
    offset = client.create(name).next_offset
    writer = make_client_like(client)
    timer = appended_later(lambda: writer.append(name, {"woke": True}))
    try:
        result = client.long_poll(name, offset)  # the server would wait 30 s
    finally:
        timer.join()
        writer.close()
    assert result.json() == [{"woke": True}] and result.cursor and result.up_to_date


def test_long_poll_timeout_is_204_with_cursor(short_server, name):
    with make_client(short_server) as client:
        offset = client.create(name).next_offset
        first = client.long_poll(name, offset)
        assert first.messages == () and first.up_to_date and not first.closed
        assert first.next_offset == offset and first.cursor
        # The cursor is echoed; the server never answers with a smaller one.
        second = client.long_poll(name, offset, cursor=first.cursor)
        assert int(second.cursor) >= int(first.cursor)


def test_long_poll_at_the_tail_of_a_closed_stream_ends_at_once(client, name):
    client.create(name, body=[{"n": 1}], closed=True)
    tail = client.head(name).next_offset
    result = client.long_poll(name, tail)  # no 30 s wait: Stream-Closed is the end
    assert result.closed and result.messages == ()


def test_tail_follows_until_closed(client, name):
    client.create(name, body=[{"n": 0}])
    writer = make_client_like(client)

    def write():
        writer.append(name, {"n": 1})
        writer.close_stream(name, {"n": 2})

    timer = appended_later(write)
    try:
        seen = [m for result in client.tail(name) for m in result.json()]
    finally:
        timer.join()
        writer.close()
    assert seen == [{"n": 0}, {"n": 1}, {"n": 2}]


def test_sse_json_until_closed(client, name):
    client.create(name, body=[{"n": 0}])
    writer = make_client_like(client)

    def write():
        writer.append_batch(name, [{"n": 1}, {"n": 2}])
        writer.close_stream(name)

    timer = appended_later(write)
    try:
        results = list(client.sse(name))
    finally:
        timer.join()
        writer.close()
    assert [m for r in results for m in r.json()] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert results[-1].closed and results[-1].next_offset == client.head(name).next_offset


def test_sse_base64_for_binary_streams(client, name):
    payload = bytes(range(256)) * 4
    client.create(name, content_type="application/octet-stream", body=payload, closed=True)
    results = list(client.sse(name))
    assert b"".join(r.data for r in results) == payload and results[-1].closed


def test_sse_from_an_offset(client, name):
    middle = client.create(name, body=[{"n": 1}]).next_offset
    client.append(name, {"n": 2})
    client.close_stream(name)
    assert [m for r in client.sse(name, middle) for m in r.json()] == [{"n": 2}]


def test_raw_handle_passes_status_and_headers(client, name):
    client.create(name, body=[{"n": 1}])
    with client.open(name) as response:
        assert response.status_code == 200
        assert response.headers["stream-up-to-date"] == "true"
        assert response.read() == b'[{"n":1}]'
    with client.open(name + "-missing") as response:
        assert response.status_code == 404


# errors provoked from the server ------------------------------------------------------------


def test_not_found(client, name):
    for call in (client.head, client.read, client.catch_up):
        with pytest.raises(errors.StreamNotFound) as caught:
            call(name)
        assert caught.value.status == 404


def test_unauthorized(server, client, name):
    if server.kind == "reference":  # it has no auth: make it answer as an auth proxy would
        client.create(name)
        server.inject(name, status=401)
        with pytest.raises(errors.Unauthorized):
            client.head(name)
        return
    with (
        DurableStreamClient(server.url, secret="wrong") as wrong,
        pytest.raises(errors.Unauthorized),
    ):
        wrong.head(name)


def test_gone_for_a_soft_deleted_fork_source(server, client, name):
    client.create(name, body=[{"n": 1}])
    fork = httpx.put(
        f"{server.url}/v1/stream/{name}-fork",
        headers={
            "content-type": "application/json",
            "stream-forked-from": f"/v1/stream/{name}",
            **({"authorization": f"Bearer {server.secret}"} if server.secret else {}),
        },
    )
    assert fork.status_code == 201, fork.text
    client.delete(name)
    with pytest.raises(errors.Gone):
        client.read(name)
    with pytest.raises(errors.Gone):
        client.append(name, {"n": 2})


def test_payload_too_large(server, client, name):
    client.create(name, content_type="application/octet-stream")
    if server.kind == "reference":  # no body limit there
        server.inject(name, status=413)
        body = b"x"
    else:
        body = b"x" * (8 * 1024 * 1024 + 1)
    with pytest.raises(errors.PayloadTooLarge):
        client.append(name, body, content_type="application/octet-stream")


def test_rate_limited_carries_retry_after(server, client, name):
    client.create(name)
    server.inject(name, status=429, retryAfter=3)
    with pytest.raises(errors.RateLimited) as caught:
        client.head(name)
    assert caught.value.retry_after == 3 and caught.value.transient


@pytest.mark.parametrize("status", [500, 503])
def test_server_error(server, client, name, status):
    client.create(name)
    server.inject(name, status=status)
    with pytest.raises(errors.ServerError) as caught:
        client.read(name)
    assert caught.value.status == status and caught.value.transient


def test_transport_error():
    with DurableStreamClient(f"http://127.0.0.1:{free_port()}") as client:
        with pytest.raises(errors.TransportError) as caught:
            client.head("nothing")
        assert caught.value.transient and caught.value.status is None


def make_client_like(client: DurableStreamClient) -> DurableStreamClient:
    """A second client to the same server (a writer beside a blocked reader)."""
    secret = client.http.headers.get("authorization", "").removeprefix("Bearer ") or None
    return DurableStreamClient(client.base_url, secret=secret)
