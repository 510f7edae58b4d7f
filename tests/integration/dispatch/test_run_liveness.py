"""A run lives while its worker holds it, and its parent hears how it ended exactly once.

Finding 1 of issue 32: the sweep orphaned a run by its silence alone, while its worker held
the thread and sat in a long tool call; the orphan was not fenced, so the run went on
writing, and the parent got two reports.
"""

import time

import pytest

from dispatch import runs, thread_leases
from dispatch.backstage import backstage
from dispatch.fencing import FencedWriter
from dispatch.runs import claim_run, report_to_parent
from dispatch.supervision import orphan_silent_runs
from dispatch.takeover import recover
from threads.entries import Chat, ThreadChildFinished, ThreadRunState
from threads.lifecycle import new_entry
from threads.models import Thread
from threads.recency import stream_writer

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


def ms(later_s: float) -> int:
    return time.time_ns() // 1_000_000 + int(later_s * 1000)


def claim(live):
    claim = claim_run(live.world.thread, handle="helper", task="build", by=live.world.owner.agent)
    return claim, Thread.objects.get(pk=claim.child_id)


def reports(live) -> list[ThreadChildFinished]:
    return [e.payload for e in live.entries() if isinstance(e.payload, ThreadChildFinished)]


def test_a_run_its_worker_holds_is_never_orphaned_for_its_silence(live):
    run, child = claim(live)
    # A worker holds the child thread and renews its lease: Pi sits in a 2-minute tool call.
    assert thread_leases.acquire(child.pk, "worker-a", 600) is thread_leases.Taken.FRESH
    assert orphan_silent_runs(at_ms=ms(120)) == 0
    assert "signal.thread.orphaned" not in live.types(child)
    assert reports(live) == []
    # Once nobody holds it (its start never reached a worker), silence is what is left.
    thread_leases.drop(child.pk, "worker-a")
    assert orphan_silent_runs(at_ms=ms(120)) == 1
    assert [(r.runId, r.ok) for r in reports(live)] == [(run.run_id, False)]


def test_a_run_whose_lease_lapsed_is_left_to_the_takeover(live):
    _, child = claim(live)
    assert thread_leases.acquire(child.pk, "worker-a", 0) is thread_leases.Taken.FRESH
    assert orphan_silent_runs(at_ms=ms(120)) == 0  # the next engine's tick fences and settles it
    assert reports(live) == []


def test_a_run_that_reported_then_went_silent_is_not_reported_again(live):
    # The run's worker told the parent it failed (an append of its own state failed), then
    # let go of the thread: its record on the child still says running.
    run, child = claim(live)
    failed = ThreadChildFinished(
        childThreadId=child.pk, report="The run failed: boom", runId=run.run_id, ok=False
    )
    stream_writer().append(live.world.thread.stream_name, new_entry(failed, author=run.agent_id))
    assert orphan_silent_runs(at_ms=ms(120)) == 1
    assert live.types(child)[-2:] == ["signal.thread.orphaned", "signal.thread.run_state"]
    assert [r.report for r in reports(live)] == ["The run failed: boom"]


def test_a_report_is_written_once_whoever_writes_it_and_an_older_epoch_is_refused(live):
    run, _ = claim(live)
    assert report_to_parent(run, False, "stopped", 3)  # the orphaner, at the newer epoch
    assert not report_to_parent(run, False, "stopped", 3)  # its retry
    assert not report_to_parent(run, True, "all green", 2)  # the fenced-off run, thawed
    assert [(r.report, r.ok) for r in reports(live)] == [("stopped", False)]


def test_reporters_racing_past_the_check_are_decided_by_the_store(live, monkeypatch):
    """Both read the parent's log before either wrote (the check can't see the other): the
    producer at the newer epoch lands, the older one is refused, a same-epoch retry is one."""
    run, _ = claim(live)
    monkeypatch.setattr(runs, "_reported", lambda parent, claim: False)
    assert report_to_parent(run, False, "stopped", 3)  # the orphaner, at the newer epoch
    assert not report_to_parent(run, False, "stopped", 3)  # its retry: a duplicate
    assert not report_to_parent(run, True, "all green", 2)  # the thawed run: refused
    assert [(r.report, r.ok) for r in reports(live)] == [("stopped", False)]


def test_a_start_that_arrives_after_the_sweep_orphaned_the_run_does_not_run_it(live):
    run, child = claim(live)
    assert orphan_silent_runs(at_ms=ms(120)) == 1
    backstage().start_run(run)
    live.settle()
    states = [e.payload.state for e in live.entries(child) if e.type == "signal.thread.run_state"]
    assert states == ["claimed", "dead"]
    assert len(reports(live)) == 1


def test_a_takeover_reports_a_run_that_ended_but_never_told_its_parent(live):
    run, child = claim(live)
    bot = run.agent_id
    for payload in (
        ThreadRunState(runId=run.run_id, state="running", agentId=bot),
        Chat(text="All green."),
        ThreadRunState(runId=run.run_id, state="finished", agentId=bot),
    ):  # the worker died here, before its report
        stream_writer().append(child.stream_name, new_entry(payload, author=bot))
    recover(child.pk, FencedWriter(child.pk, 7))
    recover(child.pk, FencedWriter(child.pk, 8))  # a second takeover adds nothing
    assert [(r.report, r.ok) for r in reports(live)] == [("All green.", True)]
    assert "signal.thread.orphaned" not in live.types(child)
