"""SSE parsing, whatever the chunk boundaries."""

import base64
import json

from hypothesis import given
from hypothesis import strategies as st

from streams.sse import SSEEvent, SSEParser, SSEReader
from streams.wire import sse_result

line_ends = st.sampled_from(["\n", "\r", "\r\n"])
texts = st.text(
    st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), max_size=12
)


def render(events: list[tuple[str, list[str]]], ends: list[str]) -> bytes:
    out, i, previous = [], 0, ""
    for name, lines in events:
        parts = [f"event: {name}"] + [f"data:{line}" for line in lines] + [""]
        for part in parts:
            end = ends[i % len(ends)]
            if not part and previous == "\r" and end == "\n":
                end = "\r\n"  # CR then LF is one line end: an empty line needs its own
            out.append(part + end)
            previous, i = end, i + 1
    return "".join(out).encode()


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for point in points + [len(data)]:
        pieces.append(data[last:point])
        last = point
    return pieces


@given(
    st.lists(
        st.tuples(st.sampled_from(["data", "control"]), st.lists(texts, min_size=1, max_size=3)),
        max_size=6,
    ),
    st.lists(line_ends, min_size=1, max_size=5),
    st.lists(st.integers(min_value=0), max_size=20),
)
def test_any_chunking_gives_the_same_events(events, ends, cuts):
    data = render(events, ends)
    parser = SSEParser()
    parsed = [event for piece in split(data, cuts) for event in parser.feed(piece)]
    # A value's first space after the colon is dropped, as the spec says.
    expected = [
        SSEEvent(name, "\n".join(line[1:] if line.startswith(" ") else line for line in lines))
        for name, lines in events
    ]
    assert parsed == expected


def test_comments_ids_and_unknown_fields():
    parser = SSEParser()
    events = parser.feed(b": keep-alive\nid: 7\nretry: 10\nfoo: bar\ndata: x\n\n")
    assert events == [SSEEvent("message", "x", "7")]


def test_a_crlf_split_between_chunks_is_one_line_end():
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"") == []
    assert parser.feed(b"\n\r\n") == [SSEEvent("message", "a")]


def test_multibyte_characters_split_between_chunks():
    data = "event: data\ndata: héllo ✓\n\n".encode()
    parser = SSEParser()
    cut = data.index("✓".encode()) + 1
    assert parser.feed(data[:cut]) + parser.feed(data[cut:]) == [SSEEvent("data", "héllo ✓")]


def control(**fields) -> bytes:
    return b"event: control\ndata: " + json.dumps(fields).encode() + b"\n\n"


def test_reader_folds_data_into_the_next_control():
    reader = SSEReader()
    stream = (
        b'event: data\ndata: [{"a":1},\ndata: {"b":2}]\n\n'
        b'event: data\ndata: [{"c":3}]\n\n'
        + control(streamNextOffset="o-2", streamCursor="9", upToDate=True)
        + control(streamNextOffset="o-2", streamClosed=True)
    )
    batches = list(reader.feed(stream))
    assert len(batches) == 2
    first = sse_result(batches[0].chunks, batches[0].control, "application/json")
    assert first.json() == [{"a": 1}, {"b": 2}, {"c": 3}]
    assert (first.next_offset, first.cursor, first.up_to_date, first.closed) == (
        "o-2",
        "9",
        True,
        False,
    )
    last = sse_result(batches[1].chunks, batches[1].control, "application/json")
    assert last.closed and last.messages == ()


@given(st.binary(max_size=300), st.integers(min_value=1, max_value=76))
def test_base64_data_may_span_lines(payload, width):
    encoded = base64.b64encode(payload).decode()
    lines = [encoded[i : i + width] for i in range(0, len(encoded), width)] or [""]
    stream = ("event: data\n" + "".join(f"data:{line}\r\n" for line in lines) + "\n").encode()
    reader = SSEReader(base64_data=True)
    batches = list(reader.feed(stream + control(streamNextOffset="x", streamClosed=True)))
    result = sse_result(batches[0].chunks, batches[0].control, "application/octet-stream")
    assert result.data == payload and result.messages is None
