"""Failure texts fit for a thread: no server paths, one short line."""

from hypothesis import given
from hypothesis import strategies as st

from threads import entries as E
from threads.failures import is_config_error, scrub, short_reason
from threads.narration import Name, Names, narration

PI_NO_KEY = (
    "Pi refused prompt: No API key found for openai. Use /login or set an API key "
    "environment variable.\n    at AgentSession.prompt "
    "(/work/main/node_modules/@mariozechner/pi-coding-agent/dist/core/agent-session.js:812:19)\n"
    "See /home/arbe/.pi/agent/auth.json or var/pi/agent/models.json"
)


def test_scrub_takes_out_frames_and_paths():
    text = scrub(PI_NO_KEY)
    assert "No API key found for openai" in text
    for leak in ("node_modules", "/home/", "var/pi", "/work/", "agent-session.js"):
        assert leak not in text


segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-@", min_size=1, max_size=12)


@given(
    st.sampled_from(["/home", "/work/main", "/root", "/tmp", "node_modules", "var", "/usr/lib"]),
    st.lists(segment, min_size=1, max_size=5),
    st.text(alphabet="abc ", max_size=20),
)
def test_no_path_survives_scrub(root, parts, words):
    path = "/".join([root, *parts])
    text = scrub(f"{words} failed at {path}:12:3 ({words})")
    assert path not in text and root.strip("/") + "/" not in text


def test_short_reason_is_one_line_an_owner_can_act_on():
    assert short_reason(PI_NO_KEY) == "no API key for openai"
    assert is_config_error(PI_NO_KEY)
    assert short_reason("500 fake upstream failure") == "500 fake upstream failure"
    assert not is_config_error("500 fake upstream failure")
    long = "x" * 400
    assert len(short_reason(long)) == 120


def test_a_failed_reply_is_narrated_as_its_bots_one_line():
    names = Names({"ag_w": Name("Writer", "writer", is_bot=True)})
    failed = E.DispatchFailed(stage="spawn", error=PI_NO_KEY, dispatchId="d1")
    assert narration(failed, names, "ag_w") == (
        "@writer couldn't reply: no API key for openai; an owner can fix it on the members page"
    )
    assert narration(E.ThreadPiFailed(error=PI_NO_KEY, dispatchId="d1"), names) is None
    assert narration(E.DispatchFailed(stage="model", error="x", final=False), names) is None


def test_older_threads_no_longer_narrate_ordinary_chat():
    outcome = E.DirectorOutcome(upTo="m1", reason="No bot was mentioned.")
    assert narration(outcome, Names()) is None
    retired = E.DirectorOutcome(upTo="m1", reason="@gone is no longer in this house.")
    assert narration(retired, Names()) == "Nobody speaks: @gone is no longer in this house."


def test_an_interrupted_reply_says_it_answers_again_and_a_takeover_says_nothing():
    names = Names({"ag_w": Name("Writer", "writer", is_bot=True)})
    again = E.DispatchFailed(stage="worker", error="stopped", dispatchId="d1", final=False)
    assert narration(again, names, "ag_w") == "@writer was interrupted; answering again"
    gave_up = E.DispatchFailed(stage="worker", error="stopped again", dispatchId="d1", attempt=3)
    assert narration(gave_up, names, "ag_w") == "@writer couldn't reply: stopped again"
    assert narration(E.ThreadTakenOver(epoch=3), names) is None


def test_a_takeover_record_is_checked_at_the_edge():
    import pytest

    E.encode_entry(E.Entry(id="e1", ts=1, payload=E.ThreadTakenOver(epoch=1)))
    with pytest.raises(E.EntryError, match=r"\$\.payload\.epoch"):
        E.encode_entry(E.Entry(id="e1", ts=1, payload=E.ThreadTakenOver(epoch=0)))
