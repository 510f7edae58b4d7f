"""The entry contract: round trips for every payload, and rejections that name the field."""

import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from threads import entries as E

ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=24)
texts = st.text(min_size=1, max_size=200)
small_ints = st.integers(min_value=0, max_value=10_000)

payloads = st.one_of(
    st.builds(E.Chat, text=texts),
    st.builds(E.EntryDeleted, entryId=ids),
    st.builds(E.ThreadCreated, title=st.text(max_size=50)),
    st.builds(E.ThreadRenamed, title=texts),
    st.builds(E.ThreadArchived),
    st.builds(
        E.ThreadRunState,
        runId=ids,
        state=st.sampled_from(["claimed", "running", "finished", "failed", "dead"]),
    ),
    st.builds(E.ThreadPiFailed, error=texts, attempt=st.integers(1, 5)),
    st.builds(E.ThreadOrphaned, reason=texts),
    st.builds(E.ThreadChildFinished, childThreadId=ids, report=texts),
    st.builds(E.DirectorDecided, picked=st.lists(ids, max_size=3), upTo=ids),
    st.builds(E.DirectorOutcome, upTo=ids, reason=st.none() | texts),
    st.builds(
        E.DispatchStarted, dispatchId=ids, agentId=ids, entryIds=st.lists(ids), round=small_ints
    ),
    st.builds(
        E.DispatchPhase,
        dispatchId=ids,
        phase=st.sampled_from(["thinking", "tool", "answering", "steering", "retrying"]),
    ),
    st.builds(E.DispatchSteered, dispatchId=ids, entryIds=st.lists(ids, min_size=1)),
    st.builds(
        E.DispatchFinished,
        dispatchId=ids,
        spend=st.builds(E.Spend, input=small_ints, output=small_ints, costUsd=st.floats(0, 10)),
    ),
    st.builds(
        E.DispatchFailed,
        stage=st.sampled_from(["wake", "director", "spawn", "model", "process", "timeout"]),
        error=texts,
        attempt=st.integers(1, 5),
    ),
    st.builds(
        E.EnvironmentPrepared, agentId=ids, isolation=st.sampled_from(["bubblewrap", "none"])
    ),
    st.builds(E.FilesChanged, paths=st.lists(texts, max_size=3)),
    st.builds(E.HouseMemberAdded, agentId=ids),
    st.builds(E.HouseMemberRemoved, agentId=ids),
    st.builds(E.PiAssistant, message=st.just({"role": "assistant", "content": []})),
    st.builds(E.PiToolResult, message=st.just({"role": "toolResult", "toolCallId": "c1"})),
    st.builds(E.PiCompaction, reason=st.sampled_from(["manual", "threshold"])),
)
entries = st.builds(
    E.Entry,
    id=ids,
    ts=st.integers(min_value=0, max_value=2**48),
    payload=payloads,
    authorId=st.none() | ids,
)


@given(entries)
def test_one_entry_round_trips(entry):
    assert E.decode_entry(E.encode_entry(entry)) == entry


@given(st.lists(entries, max_size=8))
def test_an_array_of_entries_round_trips(items):
    assert E.decode_entries(E.encode_entries(items)) == items


def test_every_payload_type_is_covered_by_the_round_trip_strategy():
    legacy = {"pi.message_start", "pi.message_update", "pi.chunk"}
    covered = {E.PAYLOAD_TYPES[t] for t in E.PAYLOAD_TYPES if t not in legacy}
    assert len(covered) == len(E.PAYLOAD_TYPES) - len(legacy)


def entry_json(payload, **envelope):
    return json.dumps({"id": "e1", "ts": 1700000000000, "payload": payload, **envelope})


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"type": "nope"}, "$.payload.type"),
        ({"text": "no type"}, "$.payload"),
        ({"type": "chat"}, "`text`"),
        ({"type": "chat", "text": ""}, "$.payload.text"),
        ({"type": "chat", "text": 5}, "$.payload.text"),
        ({"type": "chat", "text": "x" * (E.MAX_CHAT_CHARS + 1)}, "$.payload.text"),
        ({"type": "chat", "text": "hi", "authorId": "x"}, "`authorId`"),
        ({"type": "signal.entry.deleted"}, "`entryId`"),
        ({"type": "signal.dispatch.failed", "stage": "lunch", "error": "e"}, "$.payload.stage"),
        ({"type": "signal.dispatch.started", "dispatchId": "d", "agentId": "a"}, "`entryIds`"),
        ({"type": "user.message", "text": "hi"}, "$.payload.type"),
        ({"type": "span.start"}, "$.payload.type"),
    ],
)
def test_invalid_payloads_are_rejected_naming_the_field(payload, field):
    with pytest.raises(E.EntryError) as excinfo:
        E.decode_entry(entry_json(payload))
    assert field in str(excinfo.value)


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"ts": 1, "payload": {"type": "chat", "text": "x"}}, "`id`"),
        ({"id": "e", "payload": {"type": "chat", "text": "x"}}, "`ts`"),
        ({"id": "e", "ts": -1, "payload": {"type": "chat", "text": "x"}}, "$.ts"),
        ({"id": "", "ts": 1, "payload": {"type": "chat", "text": "x"}}, "$.id"),
        ({"id": "e", "ts": 1, "payload": {"type": "chat", "text": "x"}, "who": 1}, "`who`"),
    ],
)
def test_invalid_envelopes_are_rejected_naming_the_field(doc, field):
    with pytest.raises(E.EntryError) as excinfo:
        E.decode_entry(json.dumps(doc))
    assert field in str(excinfo.value)


def test_malformed_json_is_an_entry_error():
    with pytest.raises(E.EntryError, match="Malformed JSON"):
        E.decode_entry(b"{not json")


def test_convert_payload_names_the_field_under_payload():
    with pytest.raises(E.EntryError, match=r"\$\.payload\.text"):
        E.convert_payload({"type": "chat", "text": 5})


@pytest.mark.parametrize("kind", ["pi.message_start", "pi.message_update", "pi.chunk"])
def test_legacy_pi_typing_parses_and_is_never_shown(kind):
    entry = E.decode_entry(entry_json({"type": kind, "text": "typing…", "delta": "x"}))
    assert isinstance(entry.payload, E.PiTyping)
    assert entry.payload.shown is False
    assert entry.type == kind


def test_pi_payloads_keep_pis_own_fields():
    message = {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "usage": {}}
    entry = E.decode_entry(entry_json({"type": "pi.assistant", "message": message, "x": 1}))
    assert entry.payload.message == message
    assert entry.payload.shown is True


def test_a_reader_that_meets_an_id_twice_keeps_the_first():
    first = E.Entry(id="a", ts=1, payload=E.Chat(text="first"))
    again = E.Entry(id="a", ts=2, payload=E.Chat(text="again"))
    other = E.Entry(id="b", ts=3, payload=E.Chat(text="b"))
    assert E.first_of_each_id([first, other, again]) == [first, other]


def test_encoding_omits_absent_optional_fields():
    entry = E.Entry(id="a", ts=1, payload=E.ThreadArchived())
    assert msgspec.json.decode(E.encode_entry(entry)) == {
        "id": "a",
        "ts": 1,
        "payload": {"type": "signal.thread.archived"},
    }
