"""Pure parts of the embedded streams server: offsets, cursors, header rules, JSON bodies."""

import pytest

from streams.server import offsets
from streams.server.protocol import (
    Producer,
    ProtocolError,
    check_stream_name,
    create_content_type,
    json_messages,
    json_values,
    normalize_content_type,
    parse_expires_at,
    parse_flag,
    parse_producer,
    parse_sub_offset,
    parse_ttl,
)


def test_offsets_are_fixed_width_and_sort_like_positions():
    values = [0, 1, 9, 10, 12345, 10**15]
    formatted = [offsets.format_offset(v) for v in values]
    assert formatted[0] == "0000000000000000_0000000000000000"
    assert all(len(f) == 33 for f in formatted)
    assert sorted(formatted) == formatted
    assert [offsets.parse_offset(f) for f in formatted] == values


def test_parse_offset_sentinels_and_errors():
    assert offsets.parse_offset("-1") == -1
    assert offsets.parse_offset("1_0") == offsets.BEYOND  # a read-sequence we never mint
    for bad in ["", "now", "abc", "1_", "_1", "0_0_0", "-2"]:
        with pytest.raises(offsets.InvalidOffset):
            offsets.parse_offset(bad)


def test_cursor_never_goes_backwards():
    now = offsets.CURSOR_EPOCH + 20 * 1000 + 5
    assert offsets.response_cursor(None, now) == "1000"
    assert offsets.response_cursor("999", now) == "1000"
    assert offsets.response_cursor("garbage", now) == "1000"
    for client in ("1000", "5000"):
        answer = int(offsets.response_cursor(client, now))
        assert int(client) < answer <= int(client) + 180  # 1-3600 s of jitter in 20 s steps


@pytest.mark.parametrize(("value", "expected"), [("0", 0), ("60", 60), (None, None)])
def test_ttl_accepts_plain_decimals(value, expected):
    assert parse_ttl(value) == expected


@pytest.mark.parametrize("value", ["", "01", "+1", "-1", "1.0", "1e3", " 1", "abc"])
def test_ttl_rejects_anything_else(value):
    with pytest.raises(ProtocolError) as error:
        parse_ttl(value)
    assert error.value.status == 400


def test_expires_at_is_rfc3339():
    assert parse_expires_at("1970-01-01T00:01:00Z") == 60.0
    assert parse_expires_at("1970-01-01T01:00:00+01:00") == 0.0
    for bad in ["", "tomorrow", "2024-13-01T00:00:00Z", "12345"]:
        with pytest.raises(ProtocolError):
            parse_expires_at(bad)


def test_flags_and_content_types():
    assert parse_flag("true") and parse_flag("TRUE")
    assert not parse_flag("yes") and not parse_flag(None) and not parse_flag("1")
    assert normalize_content_type("Application/JSON; charset=utf-8") == "application/json"
    assert create_content_type("text/plain") == "text/plain"
    assert create_content_type("") is None and create_content_type("nonsense") is None


def test_producer_headers_all_or_none():
    assert parse_producer(None, None, None) is None
    assert parse_producer("p", "1", "2") == Producer("p", 1, 2)
    for args in [("p", None, None), ("", "0", "0"), ("p", "-1", "0"), ("p", "0", "1.5"),
                 ("p", str(2**53), "0")]:  # fmt: skip
        with pytest.raises(ProtocolError) as error:
            parse_producer(*args)
        assert error.value.status == 400


def test_sub_offset():
    assert parse_sub_offset(None) == 0
    assert parse_sub_offset("3") == 3
    with pytest.raises(ProtocolError):
        parse_sub_offset("05")


def test_json_bodies_flatten_one_level_and_keep_bytes():
    assert json_messages(b'{"a": 1}') == b'{"a": 1}'
    assert json_messages(b'[{"a":1}, [1,2], [[3]]]') == b'{"a":1},[1,2],[[3]]'
    assert json_messages(b"[]", allow_empty=True) == b""
    assert json_values(b'{"a":1},[1,2],null') == [b'{"a":1}', b"[1,2]", b"null"]


@pytest.mark.parametrize("body", [b"[]", b"", b"{", b"[1,]", b"1 2", b"\xff"])
def test_json_bodies_rejected(body):
    with pytest.raises(ProtocolError) as error:
        json_messages(body)
    assert error.value.status == 400


@pytest.mark.parametrize("text", ["١", "٣_٤", "²", "7\n", "٠_٠"])
def test_numbers_and_offsets_are_ascii_digits_only(text):
    with pytest.raises(offsets.InvalidOffset):
        offsets.parse_offset(f"{text}_1")
    for parse in (parse_ttl, parse_sub_offset):
        with pytest.raises(ProtocolError):
            parse(text)
    with pytest.raises(ProtocolError):
        parse_producer("p", text, "0")
    with pytest.raises(ProtocolError):
        parse_expires_at(f"{text}024-01-01T00:00:00Z")


@pytest.mark.parametrize(
    "name", ["a\x00b", "a\nb", "a\rb", "a\tb", "a\x7fb", "a\x85b", "日本", "a\u2028b"]
)
def test_stream_names_that_cannot_go_in_a_header_are_refused(name):
    with pytest.raises(ProtocolError) as caught:
        check_stream_name(name)
    assert caught.value.status == 400


@pytest.mark.parametrize("name", ["arbe-thread-01J9", "test/a/b", "café ü", "x~!$&'()*+,;=:@"])
def test_printable_latin1_stream_names_are_accepted(name):
    check_stream_name(name)


@pytest.mark.parametrize("digits", ["1" + "0" * 18, "9" * 5000])
def test_numbers_are_bounded_before_int_sees_them(digits):
    for parse in (parse_ttl, parse_sub_offset):
        with pytest.raises(ProtocolError):
            parse(digits)
    with pytest.raises(ProtocolError):
        parse_producer("p", "0", digits)


def test_enormous_offsets_and_cursors_are_refused_before_int_sees_them():
    assert offsets.parse_offset("0_" + "9" * 32) == offsets.BEYOND  # past the tail: the tail
    for offset in ("0_" + "9" * 33, "9" * 5000 + "_0"):
        with pytest.raises(offsets.InvalidOffset):
            offsets.parse_offset(offset)
    assert offsets.response_cursor("9" * 5000, now=offsets.CURSOR_EPOCH) == "0"
