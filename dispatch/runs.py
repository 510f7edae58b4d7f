"""Delegated coding runs: a bot works on a task in a child thread, ``T/<childId>``.

The claim creates the child thread, stores where the run starts (``run_offset``,
the child's tail before its first run entry) and records
``signal.thread.run_state`` on both threads. The run itself writes only through
the sandbox writers' proxy (``/api/stream/<child stream>``) with a JWT for the
child stream, like any sandboxed writer. Its report lands on the parent as
``signal.thread.child_finished``, exactly once, whoever writes it (``report_to_parent``).
A run lives while its worker holds its child thread's lease (``dispatch.supervision``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import httpx
import msgspec
from django.conf import settings

from arbe_lib.concurrency import in_thread
from arbe_lib.ids import time_ordered_id
from dispatch.fencing import Fenced
from dispatch.pi.decode import Narration, assistant_failure, final_text, payloads_for
from dispatch.pi.process import PiConfig, PiError, PiSession
from dispatch.run_files import changed_files, files_in, upload_run_files
from dispatch.traces import observer
from houses.access import reads_thread
from houses.models import Agent
from houses.names import clean_title
from streams import errors
from threads import sandbox_tokens
from threads.entries import (
    Chat,
    FilesChanged,
    ThreadChildFinished,
    ThreadOrphaned,
    ThreadRunState,
    ThreadTakenOver,
)
from threads.failures import short_reason
from threads.lifecycle import create_thread, new_entry
from threads.log import log_reader
from threads.models import Thread, new_thread_id
from threads.permissions import BOT_KINDS
from threads.reading import read_entries
from threads.recency import stream_writer

logger = logging.getLogger(__name__)


class RunRefused(ValueError):
    """The run can't be delegated (unknown or unconfigured bot, empty task)."""


@dataclass(frozen=True)
class Claim:
    run_id: str
    parent_id: str
    child_id: str
    agent_id: str
    task: str


def claim_run(parent: Thread, *, handle: str, task: str, by) -> Claim:
    bot = Agent.objects.filter(
        house=parent.house, kind=Agent.Kind.BOT, handle=handle, active=True
    ).first()
    if bot is None:
        raise RunRefused(f"agent: no bot @{handle} in this house")
    if not (bot.provider and bot.model):
        raise RunRefused(f"agent: @{handle} has no model configured")
    if not reads_thread(bot.id, parent):
        raise RunRefused(f"agent: @{handle} isn't in this private thread")
    if not task.strip():
        raise RunRefused("task: describe what the run should do")
    run_id = time_ordered_id("r_")
    child_id = new_thread_id()
    child = create_thread(
        house=parent.house,
        title=clean_title(f"T/{child_id}: {task[:80]}", derived=True),
        by=by,
        parent=parent,
        thread_id=child_id,
    )
    writer = stream_writer()
    start = log_reader().head(child.stream_name).next_offset
    Thread.objects.filter(pk=child.pk).update(run_offset=start)
    claimed = {"runId": run_id, "state": "claimed", "agentId": bot.id, "task": task[:2000]}
    writer.append(child.stream_name, new_entry(ThreadRunState(**claimed), author=bot.id))
    on_parent = ThreadRunState(**claimed, childThreadId=child.pk)
    writer.append(parent.stream_name, new_entry(on_parent, author=by.id if by else None))
    return Claim(run_id, parent.pk, child.pk, bot.id, task)


class SandboxWriter:
    """Appends to one stream through ``/api/stream/<name>`` with the run's JWT."""

    def __init__(self, claim: Claim, stream: str, epoch: int | None = None):
        from django.core.asgi import get_asgi_application

        token = sandbox_tokens.mint(
            agent_id=claim.agent_id,
            stream=stream,
            kinds=tuple(sorted(BOT_KINDS)),
            run=claim.run_id,
            dispatch=claim.run_id,
            ttl_s=settings.DISPATCH_REPLY_CAP_S + 300,
            epoch=epoch,
        )
        self.fenced = epoch is not None
        self.seq = 0
        # In-process, through the same Django view a sandbox on the network would reach.
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=get_asgi_application()),
            base_url=settings.ARBE_INTERNAL_URL,
            headers={"Authorization": f"Bearer {token}"},
        )
        self.path = f"/api/stream/{stream}"

    async def append(self, *payloads) -> None:
        # The proxy stamps id, ts and authorId (the token's bot); we send payloads only.
        items = [{"payload": msgspec.to_builtins(p)} for p in payloads]
        headers = {"Producer-Seq": str(self.seq)} if self.fenced else {}
        response = await self.client.post(self.path, json=items, headers=headers)
        if response.status_code == 403 and self.fenced:
            raise Fenced(self.path)  # a takeover wrote at a newer epoch
        response.raise_for_status()
        self.seq += 1

    async def aclose(self) -> None:
        await self.client.aclose()


async def run_coding(claim: Claim, epoch: int | None = None) -> None:
    """Run ``claim``; ``epoch``: the lease epoch its child thread is held at, which fences
    the run's writes (a takeover's ``orphan`` writes at a newer one)."""
    child, bot = await in_thread(_load, claim)
    if (state := await in_thread(run_state, child, claim.run_id)) != "claimed":
        # Its start came late: the sweep orphaned it (and told the parent) meanwhile.
        logger.warning("run %s is %s already; it does not start", claim.run_id, state)
        return
    sandbox = SandboxWriter(claim, child.stream_name, epoch)
    ok, report = False, ""
    try:
        await sandbox.append(ThreadRunState(runId=claim.run_id, state="running", agentId=bot.id))
        ok, report, files = await _run_pi(claim, child, bot, sandbox)
        if ok:
            await sandbox.append(Chat(text=report[:20_000], attachments=files))
        state = "finished" if ok else "failed"
        await sandbox.append(ThreadRunState(runId=claim.run_id, state=state, agentId=bot.id))
    except Fenced:
        logger.warning("run %s was taken over; it stops here", claim.run_id)
        return  # the taker recorded it orphaned and told the parent
    except Exception as exc:
        logger.exception("run %s failed", claim.run_id)
        report = report or f"The run failed: {short_reason(str(exc))}"
    finally:
        await sandbox.aclose()
    await in_thread(report_to_parent, claim, ok, report, epoch)


def _load(claim: Claim):
    return Thread.objects.get(pk=claim.child_id), Agent.objects.get(pk=claim.agent_id)


async def _run_pi(claim: Claim, child: Thread, bot: Agent, sandbox: SandboxWriter):
    from dispatch.conversation import bot_env, ensure_agent_dir
    from dispatch.pi import layout
    from dispatch.pi.providers import config_problem

    source = ensure_agent_dir()
    config = PiConfig(
        provider=bot.provider,
        model=bot.model,
        instructions=bot.instructions,
        session_file=layout.session_file(child.house_id, child.pk, bot.id, "run"),
        workspace=layout.workspace(bot.id, child.pk),
        agent_dir=layout.bot_agent_dir(bot, source),
        env=bot_env(bot, source),
    )
    messages: list[dict] = []
    problem = config_problem(bot.provider, bot.api_key_env, source)
    if problem is not None:  # the key rule and the key, as before a reply
        return False, f"The run failed: {short_reason(problem[1])}", []
    narration = Narration()
    try:
        session = await PiSession.start(config)
    except PiError as exc:
        return False, f"Pi could not start: {short_reason(str(exc))}", []
    trace = observer(session_id=child.pk, distinct_id=bot.id, name="coding_run")
    session.observe(trace.see)
    ended = False
    before = await in_thread(files_in, config.workspace)
    try:
        await session.prompt(claim.task)
        async for event in session.events():
            payloads = payloads_for(event, claim.run_id, narration)
            if payloads:
                await sandbox.append(*payloads)
            if (
                getattr(event, "type", "") == "message_end"
                and event.message.get("role") == "assistant"
            ):
                messages.append(event.message)
            if getattr(event, "type", "") == "agent_end":
                ended = True
                break
    finally:
        trace.close("" if ended else "The run ended before Pi finished.")
        await session.close()
    after = await in_thread(files_in, config.workspace)
    if changed := changed_files(before, after):
        await sandbox.append(FilesChanged(paths=changed, runId=claim.run_id))
    failure = assistant_failure(messages[-1]) if messages else "Pi produced no answer."
    if failure:
        return False, f"The run failed: {short_reason(failure)}", []
    files = await in_thread(upload_run_files, child.pk, bot.id, config.workspace, before, after)
    return True, final_text(messages) or "(The run finished without a report.)", files


def report_to_parent(claim: Claim, ok: bool, report: str, epoch: int | None) -> bool:
    """Tell the parent how the run ended, once per run whoever writes it (the run itself,
    or whoever orphaned it); True if this call wrote the report.

    Fenced: the report is written as the producer ``report:<run>`` at the writer's lease
    epoch of the child thread, so once a writer at a newer epoch reported, an older one is
    refused. Idempotent: a report already in the parent's log is the report.
    """
    parent = Thread.objects.get(pk=claim.parent_id)
    if _reported(parent, claim):
        return False
    finished = ThreadChildFinished(
        childThreadId=claim.child_id, report=report[:4000], runId=claim.run_id, ok=ok
    )
    producer = (f"report:{claim.run_id}", epoch or 0, 0)
    try:
        result = stream_writer().append(
            parent.stream_name, new_entry(finished, author=claim.agent_id), producer=producer
        )
    except errors.ProducerStale:
        logger.warning("run %s: a newer writer reported it already", claim.run_id)
        return False
    return not result.duplicate


def _reported(parent: Thread, claim: Claim) -> bool:
    for entry in read_entries(parent.id)[0]:
        p = entry.payload
        if isinstance(p, ThreadChildFinished) and (
            p.runId == claim.run_id or (p.runId is None and p.childThreadId == claim.child_id)
        ):
            return True
    return False


def run_state(thread: Thread, run_id: str) -> str | None:
    """The run's state as its own thread's log says it (orphaned: dead)."""
    state = None
    for entry in read_entries(thread.id)[0]:
        p = entry.payload
        if isinstance(p, ThreadRunState) and p.runId == run_id:
            state = p.state
        elif isinstance(p, ThreadOrphaned) and p.runId == run_id:
            state = "dead"
    return state


def silent_reason(seconds: int) -> str:
    return f"No worker held the run, and no word from it for {seconds} s."


def orphan(thread: Thread, run_id: str, agent_id: str | None, reason: str, epoch: int) -> bool:
    """A run with nobody behind it (its worker stopped, or no worker ever held it): fence
    it off, then say so on its thread and on the parent. True if it was still live.

    ``epoch``: the orphaner's lease epoch of the run's thread. Its first entry is written as
    the run's own sandbox producer (``sandbox:<run>``, as ``threads.stream_proxy`` writes
    the run's entries) at that epoch, so the store refuses the run's writes from then on,
    and the log read after it holds all the run will ever have written: a run that ended
    just before is left as it ended. A retry at the same epoch lands nothing twice.
    """
    writer = stream_writer()
    producer = f"sandbox:{run_id}"
    fence = new_entry(ThreadTakenOver(epoch=epoch))
    writer.append(thread.stream_name, fence, producer=(producer, epoch, 0))
    state = run_state(thread, run_id)
    if state in ("claimed", "running"):
        orphaned = new_entry(ThreadOrphaned(reason=reason, runId=run_id))
        writer.append(thread.stream_name, orphaned, producer=(producer, epoch, 1))
        dead = new_entry(ThreadRunState(runId=run_id, state="dead", agentId=agent_id))
        writer.append(thread.stream_name, dead, producer=(producer, epoch, 2))
    elif state != "dead":
        return False  # it finished or failed on its own, and reports that itself
    if thread.parent_id:
        claim = Claim(run_id, thread.parent_id, thread.pk, agent_id or "", "")
        report_to_parent(claim, False, reason, epoch)
    return state != "dead"
