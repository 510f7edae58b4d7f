"""The T3 board normalizer: seed 001's examples and rules, and t3code.md's pitfalls."""

import copy

from hypothesis import given
from hypothesis import strategies as st

from boards.t3 import META, Row, apply, normalize
from tests.t3_items import enrichment, shell_snapshot, shell_thread

T0 = "2026-11-05T00:00:00.000Z"
T1 = "2026-11-05T00:01:00.000Z"
T2 = "2026-11-05T00:02:00.000Z"
T3 = "2026-11-05T00:03:00.000Z"


ENRICHMENT = enrichment()


def event(kind, payload, sequence=124, thread_id="t1", **base):
    return {
        "kind": "event",
        "sequence": sequence,
        "event": {
            "id": f"e{sequence}",
            "threadId": thread_id,
            "occurredAt": T1,
            "type": kind,
            "payload": payload,
        }
        | base,
    }


def run(run_id="r1", ordinal=1, status="running", **times):
    return {
        "id": run_id,
        "threadId": "t1",
        "ordinal": ordinal,
        "status": status,
        "requestedAt": T0,
        "startedAt": None,
        "completedAt": None,
    } | times


def projection(runs=(), messages=(), **thread):
    return {
        "thread": {"id": "t1", "title": "Example", "archivedAt": None, "deletedAt": None} | thread,
        "runs": list(runs),
        "messages": list(messages),
        "providerTurns": [],
        "attempts": [],
        "updatedAt": T0,
    }


def message(message_id="m1", text="Example message", created=T0, updated=T0):
    return {
        "id": message_id,
        "role": "user",
        "text": text,
        "createdAt": created,
        "updatedAt": updated,
    }


def display(rows):
    return {key: row.display() for key, row in rows.items()}


# -- seed 001's own examples ---------------------------------------------------------------


def test_seed_shell_chunk_snapshot_then_enrichment():
    rows = apply({}, [shell_snapshot(shell_thread()), ENRICHMENT], host="workstation")
    assert display(rows) == {
        ("workstation", "t1"): {
            "thread_id": "t1",
            "title": "Example",
            "state": "idle",
            "last_turn_at": None,
            "last_message_snippet": None,
            "host": "workstation",
        }
    }


def test_seed_thread_snapshot_then_message_event():
    snapshot = {
        "kind": "snapshot",
        "snapshotSequence": 123,
        "projection": projection(messages=[message()]),
    }
    rows = apply({}, [snapshot], host="workstation")
    row = rows[("workstation", "t1")]
    assert (row["state"], row["last_message_snippet"]) == ("idle", "Example message")
    update = event(
        "message.updated",
        {"id": "m1", "threadId": "t1", "text": "Updated message", "updatedAt": T1},
    )
    rows = apply(rows, [update], host="workstation")
    assert rows[("workstation", "t1")]["last_message_snippet"] == "Updated message"
    assert rows[("workstation", "t1")]["title"] == "Example"  # sparse: absent values kept


def test_get_thread_projection_result_is_a_catch_up():
    rows = apply({}, projection(runs=[run(status="completed", completedAt=T2)]), host="h")
    assert rows[("h", "t1")]["state"] == "completed"
    assert rows[("h", "t1")]["last_turn_at"] == T2


# -- rows and meta -------------------------------------------------------------------------


def test_meta_is_kept_but_hidden_from_repr_and_display():
    rows = apply({}, projection(runs=[run()], messages=[message()]), host="h")
    row = rows[("h", "t1")]
    assert isinstance(row, Row)
    assert row[META]["run"]["ordinal"] == 1 and row[META]["message"]["id"] == "m1"
    assert "__meta__" not in repr(row) and "__meta__" not in str(row)
    assert "__meta__" not in row.display()
    assert "__meta__" not in repr(rows)


def test_apply_never_mutates_its_input():
    rows = apply({}, projection(runs=[run()], messages=[message()]), host="h")
    before = copy.deepcopy(rows)
    apply(rows, [event("run.updated", run(status="completed", completedAt=T2))], host="h")
    assert rows == before


# -- state ---------------------------------------------------------------------------------


def test_newest_run_by_ordinal_or_idle():
    runs = [run("r2", 2, "running"), run("r1", 1, "completed")]
    assert apply({}, projection(runs=runs), host="h")[("h", "t1")]["state"] == "running"
    assert apply({}, projection(), host="h")[("h", "t1")]["state"] == "idle"


def test_shell_status_is_kept_as_a_string_and_archived_reads_archived():
    rows = apply(
        {},
        [
            shell_snapshot(
                shell_thread(status="waiting"), shell_thread("t2"), archived=[shell_thread("t3")]
            )
        ],
        host="h",
    )
    assert rows[("h", "t1")]["state"] == "waiting"
    assert rows[("h", "t3")]["state"] == "archived"
    archived = {
        "kind": "thread.updated",
        "sequence": 130,
        "location": "active",
        "thread": shell_thread("t2", archivedAt=T1),
    }
    assert apply(rows, [archived], host="h")[("h", "t2")]["state"] == "archived"


def test_metadata_events_keep_the_run_state():
    rows = apply({}, projection(runs=[run(status="running")]), host="h")
    renamed = event(
        "thread.metadata-updated",
        {"id": "t1", "title": "Renamed", "archivedAt": None, "deletedAt": None},
    )
    row = apply(rows, [renamed], host="h")[("h", "t1")]
    assert (row["title"], row["state"]) == ("Renamed", "running")
    archived = event(
        "thread.archived",
        {"id": "t1", "title": "Renamed", "archivedAt": T1, "deletedAt": None},
        125,
    )
    unarchived = event(
        "thread.unarchived",
        {"id": "t1", "title": "Renamed", "archivedAt": None, "deletedAt": None},
        126,
    )
    rows = apply(rows, [archived], host="h")
    assert rows[("h", "t1")]["state"] == "archived"
    assert apply(rows, [unarchived], host="h")[("h", "t1")]["state"] == "running"


def test_late_completion_of_an_older_run_never_replaces_the_summary():
    rows = apply(
        {},
        projection(
            runs=[run("r1", 1, "completed", completedAt=T1), run("r2", 2, "running", startedAt=T2)]
        ),
        host="h",
    )
    late = event("run.updated", run("r1", 1, "failed", completedAt=T3))
    row = apply(rows, [late], host="h")[("h", "t1")]
    assert (row["state"], row["last_turn_at"]) == ("running", T2)
    newer = event("run.created", run("r3", 3, "queued", requestedAt=T3), 125)
    assert apply(rows, [newer], host="h")[("h", "t1")]["state"] == "queued"


def test_shell_rows_compare_runs_by_id_and_request_time():
    rows = apply(
        {},
        [shell_snapshot(shell_thread(status="running", latestRunId="r2", latestRunRequestedAt=T2))],
        host="h",
    )
    older = event("run.updated", run("r1", 1, "completed", requestedAt=T0, completedAt=T3))
    assert apply(rows, [older], host="h")[("h", "t1")]["state"] == "running"
    same = event("run.updated", run("r2", 2, "completed", requestedAt=T2, completedAt=T3))
    row = apply(rows, [same], host="h")[("h", "t1")]
    assert (row["state"], row["last_turn_at"], row[META]["run"]["ordinal"]) == ("completed", T3, 2)


def test_an_edit_of_an_older_message_never_replaces_the_snippet():
    rows = apply(
        {},
        projection(messages=[message("m1", "old", T0, T0), message("m2", "new", T1, T1)]),
        host="h",
    )
    assert rows[("h", "t1")]["last_message_snippet"] == "new"
    edit = event("message.updated", message("m1", "old, edited", T0, T3))
    assert apply(rows, [edit], host="h")[("h", "t1")]["last_message_snippet"] == "new"


def test_shell_message_falls_back_to_id_and_update_time():
    latest = {"id": "m2", "role": "assistant", "text": "shell text", "updatedAt": T2}
    rows = apply({}, [shell_snapshot(shell_thread(latestVisibleMessage=latest))], host="h")
    assert (
        apply(rows, [event("message.updated", message("m1", "older", T0, T3))], host="h")[
            ("h", "t1")
        ]["last_message_snippet"]
        == "shell text"
    )
    assert (
        apply(rows, [event("message.updated", message("m3", "newest", T3, T3))], host="h")[
            ("h", "t1")
        ]["last_message_snippet"]
        == "newest"
    )


# -- last_turn_at --------------------------------------------------------------------------


def test_last_turn_at_is_the_latest_of_requested_work_started_started_completed():
    turns = [
        {
            "id": "p1",
            "runAttemptId": "a1",
            "ordinal": 1,
            "status": "running",
            "startedAt": T2,
            "completedAt": None,
        }
    ]
    body = projection(runs=[run(startedAt=T1)]) | {
        "attempts": [{"id": "a1", "runId": "r1"}],
        "providerTurns": turns,
    }
    rows = apply({}, body, host="h")
    assert rows[("h", "t1")]["last_turn_at"] == T2  # work started after the run started
    turn = {
        "id": "p2",
        "runAttemptId": "a1",
        "ordinal": 2,
        "status": "running",
        "startedAt": T3,
        "completedAt": None,
    }
    assert (
        apply(rows, [event("provider-turn.updated", turn, runId="r1")], host="h")[("h", "t1")][
            "last_turn_at"
        ]
        == T3
    )


def test_iso_strings_are_kept_as_they_came():
    odd = "2026-11-05T01:00:00+01:00"  # the same instant as T0, later than none of them
    rows = apply(
        {}, projection(runs=[run(requestedAt=odd, startedAt="2026-11-05T00:00:30.5Z")]), host="h"
    )
    assert rows[("h", "t1")]["last_turn_at"] == "2026-11-05T00:00:30.5Z"
    shell = shell_thread(
        latestRunId="r9",
        latestRunRequestedAt=odd,
        latestRunStartedAt=None,
        latestRunCompletedAt=None,
    )
    assert apply({}, [shell_snapshot(shell)], host="h")[("h", "t1")]["last_turn_at"] == odd


# -- snippets ------------------------------------------------------------------------------


def test_snippets_collapse_whitespace_and_count_graphemes():
    family = "👨‍👩‍👧"  # one grapheme cluster, five code points
    text = "  a\n\tb   " + family * 200
    rows = apply({}, projection(messages=[message(text=text)]), host="h")
    snippet = rows[("h", "t1")]["last_message_snippet"]
    assert snippet.startswith("a b " + family) and snippet.count(family) == 156
    rows = apply({}, projection(messages=[message(text=text)]), host="h", snippet_length=240)
    assert rows[("h", "t1")]["last_message_snippet"].count(family) == 200


# -- shell snapshots, removals, markers ----------------------------------------------------


def test_shell_snapshot_is_authoritative_for_its_host_only():
    rows = apply({}, [shell_snapshot(shell_thread("a"), shell_thread("b"))], host="one")
    rows = apply(rows, [shell_snapshot(shell_thread("x"))], host="two")
    rows = apply(rows, [shell_snapshot(shell_thread("b"))], host="one")
    assert set(rows) == {("one", "b"), ("two", "x")}


def test_enrichment_snapshot_is_not_an_empty_board():
    rows = apply({}, [shell_snapshot(shell_thread())], host="h")
    assert apply(rows, [ENRICHMENT], host="h") == rows


def test_thread_updated_removed_and_synchronized():
    rows = apply({}, [shell_snapshot(shell_thread("t1"), shell_thread("t2"))], host="h")
    items = [
        {"kind": "synchronized"},
        {
            "kind": "thread.updated",
            "sequence": 130,
            "location": "active",
            "thread": shell_thread("t3", title="New"),
        },
        {"kind": "thread.removed", "sequence": 150, "location": "active", "threadId": "t1"},
        {"kind": "project.updated", "sequence": 151, "project": {"id": "p"}},
    ]
    rows = apply(rows, items, host="h")
    assert set(rows) == {("h", "t2"), ("h", "t3")}
    assert rows[("h", "t3")]["title"] == "New"


def test_thread_deleted_event_deletes():
    rows = apply({}, projection(), host="h")
    gone = event(
        "thread.deleted", {"id": "t1", "title": "Example", "archivedAt": None, "deletedAt": T1}
    )
    assert apply(rows, [gone], host="h") == {}
    assert normalize([gone], host="h") == [("delete", "t1")]


def test_unknown_and_malformed_items_are_ignored():
    rows = apply({}, [shell_snapshot(shell_thread())], host="h")
    junk = [
        None,
        7,
        "x",
        {},
        {"kind": "teleport"},
        {"kind": "event", "event": "nope"},
        {"kind": "event", "event": {"type": "node.updated", "threadId": "t1", "payload": {}}},
        {"kind": "event", "event": {"type": "run.updated", "threadId": "t1", "payload": None}},
        {"kind": "thread.updated", "thread": {"title": "no id"}},
        {"kind": "thread.removed", "threadId": 5},
        {"kind": "snapshot", "snapshot": {"threads": "not a list"}},
    ]
    assert apply(rows, junk, host="h") == rows


# -- normalize -----------------------------------------------------------------------------


def test_normalize_gives_partial_upserts_with_none_fields():
    ops = normalize(
        [event("message.updated", {"id": "m1", "threadId": "t1", "text": "hi", "updatedAt": T1})],
        host="h",
    )
    assert len(ops) == 1 and ops[0][0] == "upsert"
    assert ops[0][1].display() == {
        "thread_id": "t1",
        "title": None,
        "state": None,
        "last_turn_at": None,
        "last_message_snippet": "hi",
        "host": "h",
    }


def test_normalize_expresses_a_snapshot_as_upserts_only():
    ops = normalize([shell_snapshot(shell_thread("a"), shell_thread("b")), ENRICHMENT], host="h")
    assert [(op, row["thread_id"]) for op, row in ops] == [("upsert", "a"), ("upsert", "b")]


def test_replayed_events_behind_the_row_are_skipped():
    rows = apply(
        {},
        [
            event("run.created", run(status="queued"), 200),
            event("run.updated", run(status="completed"), 210),
        ],
        host="h",
    )
    stale = event("run.updated", run(status="running"), 205)
    assert apply(rows, [stale], host="h")[("h", "t1")]["state"] == "completed"


# -- properties ----------------------------------------------------------------------------

ids = st.sampled_from(["t1", "t2", "t3"])
times = st.sampled_from([T0, T1, T2, T3, None])
items = st.one_of(
    st.builds(
        lambda tid, status: shell_snapshot(shell_thread(tid, status=status)),
        ids,
        st.sampled_from(["idle", "running"]),
    ),
    st.just(ENRICHMENT),
    st.just({"kind": "synchronized"}),
    st.builds(
        lambda tid, seq: {
            "kind": "thread.updated",
            "sequence": seq,
            "location": "active",
            "thread": shell_thread(tid),
        },
        ids,
        st.integers(1, 50),
    ),
    st.builds(
        lambda tid, seq: {
            "kind": "thread.removed",
            "sequence": seq,
            "location": "active",
            "threadId": tid,
        },
        ids,
        st.integers(1, 50),
    ),
    st.builds(
        lambda tid, seq, rid, ordinal, status, t: event(
            "run.updated", run(rid, ordinal, status, completedAt=t) | {"threadId": tid}, seq, tid
        ),
        ids,
        st.integers(1, 50),
        st.sampled_from(["r1", "r2"]),
        st.integers(1, 3),
        st.sampled_from(["running", "completed"]),
        times,
    ),
    st.builds(
        lambda tid, seq, mid, text, t: event(
            "message.updated", message(mid, text, t, t) | {"threadId": tid}, seq, tid
        ),
        ids,
        st.integers(1, 50),
        st.sampled_from(["m1", "m2"]),
        st.text(max_size=20),
        times,
    ),
    st.builds(lambda tid: {"kind": "snapshot", "projection": projection(id=tid)}, ids),
)


@given(st.lists(items, max_size=25), st.lists(st.integers(0, 25), max_size=6))
def test_one_chunk_or_many_gives_the_same_rows(values, cuts):
    whole = apply({}, values, host="h")
    bounds = sorted({0, len(values), *(min(cut, len(values)) for cut in cuts)})
    split = {}
    for start, end in zip(bounds, bounds[1:], strict=False):
        split = apply(split, values[start:end], host="h")
    assert split == whole
    assert {key: row[META] for key, row in split.items()} == {
        key: row[META] for key, row in whole.items()
    }


@given(st.lists(items, max_size=15), st.lists(items, max_size=15))
def test_another_hosts_stream_never_touches_this_hosts_rows(mine, theirs):
    rows = apply({}, mine, host="mine")
    both = apply(rows, theirs, host="theirs")
    assert {key: row for key, row in both.items() if key[0] == "mine"} == rows
