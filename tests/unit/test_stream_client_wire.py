"""The service client's wire helpers: paths, params, headers, decoding, error mapping."""

import httpx
import pytest

from streams import errors, wire
from streams.client import DurableStreamClient
from streams.producers import ProducerState


def response(status: int, headers: dict | None = None, content: bytes = b"", method: str = "GET"):
    request = httpx.Request(method, "http://ds/v1/stream/s")
    return httpx.Response(status, headers=headers or {}, content=content, request=request)


def test_stream_paths():
    assert wire.stream_path("arbe-thread-1") == "/v1/stream/arbe-thread-1"
    assert wire.stream_path("a/b c?") == "/v1/stream/a/b%20c%3F"
    for bad in ("", "/abs", "a//b", "a/../b", "."):
        with pytest.raises(ValueError):
            wire.stream_path(bad)


def test_base_url_accepts_the_stream_root():
    with DurableStreamClient("http://ds:4437/v1/stream/") as client:
        assert client.base_url == "http://ds:4437"


def test_read_params_are_sorted_and_offsets_untouched():
    params = wire.read_params("0000_0001", live="long-poll", cursor="42")
    assert params == (("cursor", "42"), ("live", "long-poll"), ("offset", "0000_0001"))
    request = httpx.Request("GET", "http://ds/x", params=wire.read_params("a+b c&d"))
    assert request.url.query == b"offset=a%2Bb+c%26d"
    # Even an empty offset goes to the server, which answers 400 (BadRequest): the proxies
    # turn that into the caller's 400 instead of failing here.
    assert wire.read_params("") == (("offset", ""),)
    with pytest.raises(TypeError):
        wire.read_params(None)


def test_create_headers():
    call = wire.create_call("s", ttl=60, closed=True, body=b"[]")
    assert dict(call.headers) == {
        "content-type": "application/json",
        "stream-ttl": "60",
        "stream-closed": "true",
    }
    with pytest.raises(ValueError):
        wire.create_call("s", ttl=1, expires_at="2030-01-01T00:00:00Z")


def test_producer_headers():
    call = wire.append_call("s", b"{}", producer=("p", 2, 7), seq="009")
    assert dict(call.headers)["producer-epoch"] == "2"
    assert dict(call.headers)["producer-seq"] == "7" and dict(call.headers)["stream-seq"] == "009"
    # A close-only request sends no content type.
    assert "content-type" not in dict(wire.append_call("s", b"", close=True).headers)


def test_batch_body():
    assert wire.batch_body([{"a": 1}, b"[1]", "x"]) == b'[{"a":1},[1],"x"]'
    with pytest.raises(ValueError):
        wire.batch_body([])


def test_decode_read_headers():
    result = wire.decode_read(
        response(
            200,
            {
                "content-type": "application/json; charset=utf-8",
                "stream-next-offset": "n",
                "stream-up-to-date": "TRUE",
                "stream-closed": "true",
                "stream-cursor": "5",
            },
            b'[{"a":1}, [2]]',
        ),
        "o",
    )
    assert result.messages == (b'{"a":1}', b"[2]") and result.json() == [{"a": 1}, [2]]
    assert (result.next_offset, result.up_to_date, result.closed, result.cursor) == (
        "n",
        True,
        True,
        "5",
    )


def test_decode_long_poll_timeout():
    result = wire.decode_read(
        response(204, {"stream-up-to-date": "true", "stream-cursor": "7"}), "o"
    )
    assert result.messages == () and result.next_offset == "o" and not result.closed


def test_decode_head_and_append():
    info = wire.decode_head(
        response(200, {"stream-next-offset": "n", "stream-ttl": "30", "content-type": "text/plain"})
    )
    assert (info.next_offset, info.ttl, info.content_type, info.closed) == (
        "n",
        30,
        "text/plain",
        False,
    )
    duplicate = wire.decode_append(
        response(204, {"producer-epoch": "0", "producer-seq": "3"}, method="POST")
    )
    assert duplicate.duplicate and duplicate.next_offset is None and duplicate.producer_seq == 3
    plain = wire.decode_append(response(204, {"stream-next-offset": "n"}, method="POST"))
    assert not plain.duplicate


@pytest.mark.parametrize("value", ["\u00b2".encode("latin-1"), b"9" * 5000, b"-1", b" 3"])
def test_a_numeric_header_the_client_cannot_read_is_ignored(value):
    info = wire.decode_head(response(200, {"stream-next-offset": "n", "stream-ttl": value}))
    assert info.ttl is None


@pytest.mark.parametrize(
    ("status", "headers", "method", "error"),
    [
        (400, {}, "POST", errors.BadRequest),
        (401, {}, "GET", errors.Unauthorized),
        (403, {}, "GET", errors.Forbidden),
        (403, {"producer-epoch": "4"}, "POST", errors.ProducerStale),
        (404, {}, "HEAD", errors.StreamNotFound),
        (409, {}, "PUT", errors.StreamExists),
        (409, {}, "POST", errors.SeqConflict),
        (409, {"stream-closed": "true", "stream-next-offset": "f"}, "POST", errors.StreamClosed),
        (
            409,
            {"producer-expected-seq": "2", "producer-received-seq": "5"},
            "POST",
            errors.ProducerSeqGap,
        ),
        (410, {}, "GET", errors.Gone),
        (413, {}, "POST", errors.PayloadTooLarge),
        (429, {"retry-after": "2"}, "GET", errors.RateLimited),
        (500, {}, "GET", errors.ServerError),
        (503, {"retry-after": "soon"}, "GET", errors.ServerError),
        (405, {}, "DELETE", errors.ServerError),
    ],
)
def test_error_mapping_uses_status_and_headers_only(status, headers, method, error):
    # The body says something misleading: it must not matter.
    exc = errors.error_for_status(method, status, httpx.Headers(headers))
    assert type(exc) is error and exc.status == status
    if error is errors.StreamClosed:
        assert exc.final_offset == "f"
    if error is errors.ProducerStale:
        assert exc.current_epoch == 4
    if error is errors.ProducerSeqGap:
        assert (exc.expected, exc.received) == (2, 5)
    if status in (429, 500, 503):
        assert exc.transient
    if status == 429:
        assert exc.retry_after == 2.0


def test_backoff_honours_retry_after_and_grows():
    backoff = wire.Backoff(attempts=5, base=0.1, cap=1.0)
    assert backoff.delay(0, errors.RateLimited(retry_after=3)) == 3
    assert all(0 <= backoff.delay(n) <= min(1.0, 0.1 * 2**n) for n in range(8))


def test_producer_state_resends_the_same_seq_and_claims():
    state = ProducerState("p", auto_claim=True, backoff=wire.Backoff(attempts=2))
    assert dict(state.call("s", b"{}", "application/json").headers)["producer-seq"] == "0"
    assert state.retry_delay(0, errors.TransportError()) >= 0
    with pytest.raises(errors.TransportError):
        state.retry_delay(1, errors.TransportError())
    with pytest.raises(errors.BadRequest):
        state.retry_delay(0, errors.BadRequest())
    stale = response(403, {"producer-epoch": "6"}, method="POST")
    assert state.feed(stale) is None and (state.epoch, state.seq) == (7, 0)
    ok = response(200, {"producer-epoch": "7", "producer-seq": "0", "stream-next-offset": "n"})
    assert state.feed(ok).next_offset == "n" and state.seq == 1
