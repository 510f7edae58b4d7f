"""Structured logs: JSON lines with the request's ids, and no secret in any line
(ops/logs.py, ops/context.py)."""

import io
import json
import logging

import pytest
from django.conf import settings

from ops import context
from ops.logs import Context, JsonFormatter, Redact, redact

SECRETS = ["s3cr3t-value-of-some-length"]


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer abc.def-ghi",
        "token arbe_AbCdEfGhIjKlMnOpQrStUvWxYz012345 used",
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib3QifQ.c2lnbmF0dXJl here",
        "postgres://arbe:hunter2hunter@db:5432/arbe",
        "password=hunter2 and token: 'zzz999'",
        "the key is s3cr3t-value-of-some-length!",
    ],
)
def test_credentials_are_redacted(text):
    out = redact(text, SECRETS)
    assert "[redacted]" in out
    for leaked in ("abc.def-ghi", "arbe_AbCd", "eyJzdWIi", "hunter2", "zzz999", "s3cr3t"):
        assert leaked not in out


def test_ordinary_words_survive():
    text = "tending leases failed: OperationalError on thread t_123 (3 tokens left)"
    assert redact(text, SECRETS) == text


def line_for(logger_name: str, message: str, *args, exc: BaseException | None = None) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(Context())
    handler.addFilter(Redact())
    logger = logging.getLogger(logger_name)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        if exc is not None:
            try:
                raise exc
            except type(exc):
                logger.exception(message, *args)
        else:
            logger.warning(message, *args)
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    return stream.getvalue()


def test_a_json_line_carries_the_context_and_parses():
    context.begin("req-0123456789", thread="t_abc", house="demo", user_id=7)
    try:
        out = line_for("arbe.test.json", "pass over %s failed", "t_abc")
    finally:
        context.begin()
    assert out.endswith("\n") and out.count("\n") == 1
    line = json.loads(out)
    assert line["level"] == "WARNING" and line["logger"] == "arbe.test.json"
    assert line["message"] == "pass over t_abc failed"
    assert (line["request_id"], line["thread_id"], line["house_id"], line["user_id"]) == (
        "req-0123456789",
        "t_abc",
        "demo",
        7,
    )
    assert line["ts"].endswith("Z")


def test_a_traceback_stays_on_one_line_and_loses_the_secrets_it_held():
    secret = settings.SECRET_KEY
    out = line_for("arbe.test.exc", "it broke", exc=RuntimeError(f"key was {secret}"))
    assert out.count("\n") == 1
    line = json.loads(out)
    assert "RuntimeError" in line["exc"] and secret not in out


def test_request_ids_from_outside_are_kept_only_when_sane():
    assert context.new_request_id("lb-0123456789abcdef") == "lb-0123456789abcdef"
    for bad in ("", "short", "a b c d e f g h", "x" * 129, "abc\ndef-ghijk", "-leading-dash-1"):
        fresh = context.new_request_id(bad)
        assert fresh != bad and len(fresh) == 32


def test_a_wake_carries_the_request_id_and_a_bad_one_is_dropped():
    context.begin("req-0123456789")
    try:
        message = {"type": "director.wake", "thread": "t_1", **context.carried()}
    finally:
        context.begin()
    assert message["request_id"] == "req-0123456789"
    with context.from_wake(message, "t_1"):
        assert context.pi_environment() == {"ARBE_REQUEST_ID": "req-0123456789"}
        assert context.current().thread == "t_1"
    with context.from_wake({"request_id": "evil\nline"}, "t_1"):
        assert context.pi_environment() == {}


def test_check_restore_names_each_difference_and_nothing_when_equal():
    from ops.restore_check import Counts, differences

    live = Counts(
        {"houses": 2, "threads": 3}, {"arbe-thread-a": (5, "e5"), "arbe-thread-b": (2, "e2")}, 4
    )
    assert differences(live, Counts(dict(live.tables), dict(live.streams), 4)) == []
    copy = Counts({"houses": 2, "threads": 2}, {"arbe-thread-a": (4, "e4")}, 3)
    assert differences(live, copy) == [
        "threads: 3 here, 2 in the copy",
        "arbe-thread-a: 5 entries (last e5) here, 4 entries (last e4) in the copy",
        "arbe-thread-b: 2 entries (last e2) here, no thread in the copy",
        "attachment files: 4 here, 3 in the copy",
    ]


def test_an_exception_no_code_caught_in_a_thread_is_a_log_record(caplog, monkeypatch):
    """Not raw text on stderr ("Exception in thread …"), which would break a JSON log. The
    app installs the hook when it starts; pytest puts its own in place for each test."""
    import threading

    from ops.logs import log_thread_exceptions

    monkeypatch.setattr(threading, "excepthook", threading.excepthook)  # put back after
    log_thread_exceptions()

    def fails():
        raise RuntimeError("the database went away")

    with caplog.at_level(logging.ERROR, logger="threading"):
        worker = threading.Thread(target=fails, name="trailing-write")
        worker.start()
        worker.join()
    (record,) = [r for r in caplog.records if r.name == "threading"]
    assert "trailing-write" in record.getMessage()
    assert record.exc_info[0] is RuntimeError


def test_a_trailing_recency_write_that_fails_is_logged_not_raised(monkeypatch, caplog):
    from threads import last_entry

    def down(*args):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(last_entry, "bump_last_entry_ts", down)
    monkeypatch.setattr(last_entry, "close_old_connections", lambda: None)
    throttle = last_entry.RecencyThrottle()
    throttle._pending["t1"] = 5
    with caplog.at_level(logging.ERROR, logger="threads.last_entry"):
        throttle._flush("t1")  # a timer thread's body: must not raise
    assert "trailing recency write for thread t1 failed" in caplog.text
