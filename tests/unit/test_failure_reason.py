"""The failure stays the reason nobody speaks, and a quiet retry reads error (issue 32)."""

from dispatch.decide import BotInfo, Speakers
from dispatch.director import plan_pass
from tests.unit.test_now import BOT, Log, status, view
from threads import entries as E
from threads.status import REPLY_TURN_CAP_MS


def failed_reply(log: Log) -> str:
    m = log.chat("@bot hi")
    log.add(E.DirectorDecided(picked=[BOT], upTo=m, entryIds=[m]))
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.add(E.DispatchFailed(dispatchId="d1", stage="model", error="HTTP 529: overloaded"))
    return m


def test_the_directors_closing_pass_keeps_the_failure_as_the_reason():
    log = Log()
    failed_reply(log)
    plan = plan_pass(log.entries, [BotInfo(BOT, "bot", True, "mentions", True)], Speakers())
    assert plan.outcome is not None and plan.outcome.reason is None  # the pass has none
    log.add(plan.outcome)
    now = view(log)
    assert now.silence == "The last attempt failed: HTTP 529: overloaded"
    s = status(log)
    assert (s.state, s.message) == ("error", "The last attempt failed: HTTP 529: overloaded")


def test_a_pass_with_a_reason_of_its_own_says_it():
    log = Log()
    m = failed_reply(log)
    log.add(E.DirectorOutcome(upTo=m, picked=[], reason="@bot is no longer in this house."))
    assert view(log).silence == "@bot is no longer in this house."


def test_a_persons_next_message_starts_afresh():
    log = Log()
    m = failed_reply(log)
    log.add(E.DirectorOutcome(upTo=m, picked=[]))
    n = log.chat("anyone?")
    log.add(E.DirectorOutcome(upTo=n, picked=[]))
    assert view(log).silence is None and status(log).state == "idle"


def test_a_reply_that_goes_quiet_after_a_retried_failure_reads_error():
    log = Log()
    m = log.chat("@bot hi")
    log.add(E.DirectorDecided(picked=[BOT], upTo=m, entryIds=[m]))
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.add(E.DispatchFailed(dispatchId="d1", stage="model", error="500", final=False))
    assert status(log).state == "working"  # retrying: still working while live
    quiet = status(log, log.last_ts + REPLY_TURN_CAP_MS + 1)
    assert (quiet.state, quiet.message) == (
        "error",
        "The reply went quiet after a failed attempt.",
    )
    assert [(r.kind, r.state) for r in quiet.records] == [("thread", "error"), ("bot", "error")]


def test_a_retry_that_succeeds_is_not_an_error():
    log = Log()
    m = log.chat("@bot hi")
    log.add(E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=[m]))
    log.add(E.DispatchFailed(dispatchId="d1", stage="model", error="500", final=False))
    log.add(E.DispatchFinished(dispatchId="d1"))
    assert status(log, log.last_ts + REPLY_TURN_CAP_MS + 1).state == "done"
