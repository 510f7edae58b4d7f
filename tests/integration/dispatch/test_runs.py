"""Delegated coding runs, crashes mid-reply, and supervision of silent runs."""

import json
import time

import pytest

from dispatch.runs import claim_run
from dispatch.supervision import orphan_silent_runs
from tests.peers.fake_llm import Text, bash
from threads.models import Thread

pytestmark = [pytest.mark.backstage, pytest.mark.django_db(transaction=True)]


def delegate(live, task="USETOOL and report"):
    response = live.client.post(
        f"/api/threads/{live.world.thread.id}/runs",
        json.dumps({"agent": "helper", "task": task}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    return response.json()["run"]


def test_a_run_works_in_its_child_thread_and_reports_to_the_parent(live):
    run = delegate(live)
    live.settle()
    child = Thread.objects.get(pk=run["childThreadId"])
    assert child.parent_id == live.world.thread.pk
    assert child.title.startswith(f"T/{child.pk}: ")
    assert child.run_offset  # where the run starts, stored by the claim
    types = live.types(child)
    assert types[:3] == [
        "signal.thread.created",
        "signal.thread.run_state",
        "signal.thread.run_state",
    ]
    assert "pi.tool_result" in types
    assert types[-2:] == ["chat", "signal.thread.run_state"]
    run_entries = [e for e in live.entries(child) if e.type != "signal.thread.created"]
    assert {e.authorId for e in run_entries} == {live.world.bot.id}  # written through the JWT proxy
    states = [e.payload.state for e in live.entries(child) if e.type == "signal.thread.run_state"]
    assert states == ["claimed", "running", "finished"]
    parent = live.entries()
    assert [e.type for e in parent][-2:] == [
        "signal.thread.run_state",
        "signal.thread.child_finished",
    ]
    report = parent[-1].payload
    assert (report.childThreadId, report.ok) == (child.pk, True)
    assert "pi-tool-ok" in report.report
    # The parent records live runs only: the result is held on the child thread.
    assert [r["kind"] for r in live.now()["status"]["records"]] == ["thread"]
    assert live.now(child)["status"]["state"] == "done"


def test_runs_need_a_configured_bot_and_a_task(live):
    for body, field in [
        ({"agent": "nobody", "task": "x"}, "agent"),
        ({"agent": "helper", "task": " "}, "task"),
    ]:
        response = live.client.post(
            f"/api/threads/{live.world.thread.id}/runs",
            json.dumps(body),
            content_type="application/json",
        )
        assert response.status_code == 400 and response.json()["error"].startswith(field)


def test_a_run_silent_for_90_seconds_is_orphaned(live):
    claim = claim_run(
        live.world.thread, handle="helper", task="never started", by=live.world.owner.agent
    )
    child = Thread.objects.get(pk=claim.child_id)
    soon = time.time_ns() // 1_000_000 + 30_000
    assert orphan_silent_runs(at_ms=soon) == 0
    later = time.time_ns() // 1_000_000 + 91_000
    assert orphan_silent_runs(at_ms=later) == 1
    types = live.types(child)
    assert types[-2:] == ["signal.thread.orphaned", "signal.thread.run_state"]
    report = live.entries()[-1].payload
    assert (report.childThreadId, report.ok) == (child.pk, False)
    assert live.now(child)["status"]["state"] == "error"
    assert [r["kind"] for r in live.now()["status"]["records"]] == ["thread"]
    assert orphan_silent_runs(at_ms=later) == 0  # once is enough


def test_a_pi_crash_mid_reply_is_recorded_and_retried(live):
    live.fake.script(bash("kill -9 $PPID"), Text("back on my feet"))
    live.post("@helper try this")
    live.settle()
    types = live.types()
    assert "signal.thread.pi_failed" in types
    failed = [e.payload for e in live.entries() if e.type == "signal.dispatch.failed"]
    assert [(f.stage, f.attempt, f.final) for f in failed] == [("process", 1, False)]
    answer = [e for e in live.entries() if e.type == "chat"][-1]
    assert answer.payload.text == "back on my feet"
    assert live.now()["status"]["state"] == "done"


def test_files_a_run_writes_are_told_in_its_thread(live):
    """Issue 24, item 4: ``signal.files.changed`` names what the run wrote in its workspace."""
    live.fake.script(bash("mkdir -p notes && echo hi > notes/plan.md"), Text("wrote the plan"))
    run = delegate(live, task="write the plan")
    live.settle()
    child = Thread.objects.get(pk=run["childThreadId"])
    changed = [e for e in live.entries(child) if e.type == "signal.files.changed"]
    assert [(c.payload.paths, c.payload.runId) for c in changed] == [(["notes/plan.md"], run["id"])]
    types = live.types(child)
    assert types.index("signal.files.changed") < types.index("chat")  # before the report


WRITES = " && ".join(
    [
        "mkdir -p notes .cache node_modules/pkg",
        "echo hi > notes/plan.md",
        "printf 'a,b\\n1,2\\n' > table.csv",
        "echo kept > .cache/state",
        "echo dep > node_modules/pkg/index.js",
        "ln -s /etc/passwd leak.txt",
        "ln -s /etc notes/etc",
        ": > empty.txt",
    ]
)


def test_a_runs_report_carries_the_files_it_wrote(live, settings):
    """Issue 27: what a run wrote comes back on its report as attachments, fetched like a
    person's; hidden and tool folders, empty files and symlinks out of the workspace don't."""
    settings.ARBE_ATTACHMENTS_MAX_PER_MESSAGE = 2
    live.fake.script(bash(WRITES + " && printf z > zzz.txt"), Text("wrote the plan"))
    run = delegate(live, task="write the plan")
    live.settle()
    child = Thread.objects.get(pk=run["childThreadId"])
    changed = [e for e in live.entries(child) if e.type == "signal.files.changed"][0]
    assert {"leak.txt", ".cache/state", "zzz.txt"} <= set(changed.payload.paths)
    report = [e for e in live.entries(child) if e.type == "chat"][-1]
    assert report.authorId == live.world.bot.id and report.payload.text == "wrote the plan"
    files = report.payload.attachments
    # In path order, at most the per-message count: zzz.txt is only named by the signal.
    assert [(f.name, f.contentType, f.size) for f in files] == [
        ("plan.md", "text/plain", 3),
        ("table.csv", "text/plain", 8),
    ]
    got = live.client.get(f"/attachments/{child.id}/{files[0].id}/file")
    assert got.status_code == 200 and b"".join(got.streaming_content) == b"hi\n"
    assert got["Content-Disposition"].startswith("attachment;")
    outsider = live.world.client_for(live.world.stranger)
    assert outsider.get(f"/attachments/{child.id}/{files[0].id}/file").status_code == 404
