"""A bot's reply: Pi runs, its transcript and our narration land in the thread.

``run_reply`` appends ``signal.dispatch.started``, runs Pi in RPC mode (one
process per reply, a Pi session file per thread and bot), turns Pi's events
into ``pi.*`` entries and ``signal.dispatch.phase`` narration, takes in
messages that arrive between tool rounds (Pi's ``steer``, recorded as
``signal.dispatch.steered``), posts the bot's answer as ``chat`` authored by
the bot, and ends with ``signal.dispatch.finished`` and the spend. Model
errors, crashes and timeouts become ``signal.dispatch.failed`` (and
``signal.thread.pi_failed`` for the process), retried a bounded number of times.

A holder writes through its thread's fence (``dispatch.fencing``): once another engine
has taken the thread over, the next append raises ``Fenced``, Pi is stopped and nothing
more is recorded. The taker runs an interrupted reply again under its dispatch id
(``resume``), without a second ``signal.dispatch.started``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from django.conf import settings

from arbe_lib.concurrency import in_thread
from arbe_lib.ids import time_ordered_id
from dispatch.conversation import Conversation, load_conversation, new_messages, save_mark
from dispatch.decide import StartReply
from dispatch.director import PASS_WINDOW
from dispatch.pi.decode import Narration, assistant_failure, final_text, payloads_for, spend_of
from dispatch.pi.events import ToolExecutionEnd, ToolExecutionStart
from dispatch.pi.process import PiConfig, PiError, PiSession
from dispatch.pi.providers import config_problem
from dispatch.traces import observer
from dispatch.warm import Warm, WarmPool, fingerprint
from ops import metrics
from threads.entries import (
    Chat,
    DispatchFailed,
    DispatchFinished,
    DispatchPhase,
    DispatchStarted,
    DispatchSteered,
    EntryReaction,
    EnvironmentPrepared,
    Spend,
    ThreadPiFailed,
)
from threads.failures import is_config_error, scrub
from threads.lifecycle import new_entry
from threads.models import stream_name_for
from threads.now import add_spend
from threads.reactions import is_emoji
from threads.recency import async_stream_writer

logger = logging.getLogger(__name__)


@dataclass
class Steering:
    """What a reply has steered in, kept across its attempts so a retry never steers a
    message again: where to look for new messages next, the batches handed to Pi and not
    yet put before the model, and the messages the reply took in (``signal.dispatch.steered``)."""

    offset: str
    queued: list[list] = field(default_factory=list)
    taken: list = field(default_factory=list)


@dataclass
class Attempt:
    ok: bool
    stage: str = ""
    error: str = ""
    retryable: bool = False
    messages: list[dict] = field(default_factory=list)
    closing: asyncio.Task | None = None  # Pi's shutdown, awaited after the answer is posted


async def run_reply(
    start: StartReply, fence=None, resume: str | None = None, warm: WarmPool | None = None
) -> None:
    """Run the reply ``start`` asks for; ``resume``: the dispatch id of an interrupted one;
    ``warm``: the holder's warm Pi processes (``dispatch.warm``), used under its fence."""
    writer = fence.for_loop() if fence is not None else async_stream_writer()
    dispatch_id = resume or time_ordered_id("d_")
    stream = stream_name_for(start.thread_id)
    try:
        if resume is None:
            started = DispatchStarted(
                dispatchId=dispatch_id,
                agentId=start.agent_id,
                entryIds=start.entry_ids,
                round=start.round,
            )
            # Started first: the thread shows the bot at work while its conversation loads
            # (which reads the thread), and a load that fails ends this reply in the log.
            await writer.append(stream, new_entry(started, author=start.agent_id))
        try:
            convo: Conversation = await in_thread(load_conversation, start)
        except Exception as exc:
            logger.exception("loading the conversation for %s failed", start.thread_id)
            error = scrub(f"{type(exc).__name__}: {exc}")[:500] or type(exc).__name__
            failed = DispatchFailed(stage="spawn", error=error, dispatchId=dispatch_id)
            await writer.append(stream, new_entry(failed, author=start.agent_id))
            return
        problem = config_problem(convo.bot.provider, convo.bot.api_key_env, convo.agent_dir)
        if problem is not None:  # no process to start: say what an owner has to fix
            failed = DispatchFailed(stage="spawn", error=problem[1], dispatchId=dispatch_id)
            await writer.append(convo.stream, new_entry(failed, author=convo.bot.id))
            return
        attempts = settings.DISPATCH_MAX_ATTEMPTS
        spend = Spend()
        steering = Steering(convo.offset)
        # One count of rounds for the whole reply: a retry's first round follows the last
        # attempt's, so the thread never reads "round 1" then "round 0" for one reply.
        narration = Narration()
        for attempt in range(1, attempts + 1):
            pool = Pool(warm, fence.epoch) if warm is not None and fence is not None else None
            result = await _attempt(convo, dispatch_id, writer, steering, narration, pool)
            spend = add_spend(spend, spend_of(result.messages))  # failed attempts cost too
            if result.ok:
                try:
                    with metrics.REPLY_VISIBLE_SECONDS.time():  # the model's last word → log
                        await _finish(convo, dispatch_id, writer, result, spend, start.entry_ids)
                finally:
                    if result.closing is not None:
                        await result.closing
                return
            error = scrub(result.error)[:500] or "Pi failed."
            final = attempt == attempts or not result.retryable or is_config_error(error)
            failed = DispatchFailed(
                stage=result.stage,
                error=error,
                attempt=attempt,
                dispatchId=dispatch_id,
                final=final,
            )
            await writer.append(convo.stream, new_entry(failed, author=convo.bot.id))
            if result.stage in ("spawn", "process"):
                crashed = ThreadPiFailed(error=error, attempt=attempt, dispatchId=dispatch_id)
                await writer.append(convo.stream, new_entry(crashed, author=convo.bot.id))
            if final:
                return
    finally:
        await writer.aclose()


async def _finish(
    convo, dispatch_id, writer, result: Attempt, spend: Spend, answered: list[str] = ()
) -> None:
    text = final_text(result.messages) or "(The bot finished without saying anything.)"
    if answered and is_emoji(text.strip()):
        # One emoji and nothing else: a reaction to the newest message it answered, a
        # cheap "seen" (docs/bots.md), not a message.
        reacted = EntryReaction(entryId=answered[-1], emoji=text.strip())
        await writer.append(convo.stream, new_entry(reacted, author=convo.bot.id))
    else:
        chat = Chat(text=text[:20_000])
        await writer.append(convo.stream, new_entry(chat, author=convo.bot.id))
    finished = DispatchFinished(dispatchId=dispatch_id, spend=spend)
    await writer.append(convo.stream, new_entry(finished, author=convo.bot.id))


def attempt_prompt(convo: Conversation, steering: Steering) -> str:
    """The prompt of an attempt: a retry's also holds what an earlier attempt took in, so
    its new Pi reads those messages once, in its prompt, and they are not steered again.
    Batches handed to Pi but never put before the model are dropped: they stay undecided,
    and the director's pass after the reply answers them."""
    steering.queued.clear()
    if not steering.taken:
        return convo.prompt
    return f"{convo.prompt}\n\n{convo.render(steering.taken)}"


@dataclass
class Pool:
    """The warm processes a reply may take from and hand back to, at its lease epoch."""

    warm: WarmPool
    epoch: int


async def _attempt(
    convo: Conversation,
    dispatch_id: str,
    writer,
    steering: Steering,
    narration: Narration,
    pool: Pool | None = None,
) -> Attempt:
    config = PiConfig(
        provider=convo.bot.provider,
        model=convo.bot.model,
        instructions=convo.bot.instructions,
        session_file=convo.session_file,
        workspace=convo.workspace,
        agent_dir=convo.agent_dir,
        env=convo.env,
    )
    key = (convo.thread.id, convo.bot.id)
    warm = pool.warm.take(*key, config, pool.epoch) if pool is not None else None
    try:
        session = warm.session if warm is not None else await PiSession.start(config)
    except PiError as exc:
        return Attempt(False, "spawn", str(exc), retryable=True)
    if warm is None and pool is not None:
        warm = Warm(session, fingerprint(config), pool.epoch, replies=0, since=0.0)
    messages: list[dict] = []
    narration.answering = False
    trace = observer(session_id=convo.thread.pk, distinct_id=convo.bot.id, name="reply")
    session.observe(trace.see)
    ended = False
    try:
        prompt = attempt_prompt(convo, steering)
        reused = warm is not None and warm.replies > 0
        if not reused:
            await _prepared(convo, writer, session)
        try:
            await session.prompt(prompt)
        except PiError:
            if not reused:
                raise
            # A warm Pi that died or balks since its last reply: a cold one answers instead.
            logger.warning("warm Pi %s of %s failed its prompt; starting another", *key)
            await session.close()
            session = await PiSession.start(config)
            session.observe(trace.see)
            warm = Warm(session, fingerprint(config), pool.epoch, replies=0, since=0.0)
            await _prepared(convo, writer, session)
            await session.prompt(prompt)
        else:
            if reused:  # the model is being asked meanwhile: its events wait for this
                await _prepared(convo, writer, session)
        metrics.model_asked(convo.asked_since_ms)
        async with asyncio.timeout(settings.DISPATCH_REPLY_CAP_S):
            events = session.events()
            tools: set[str] = set()  # tool calls open now
            while True:
                # Pi is silent while a tool runs (a build, a test suite): the reply lives
                # by its worker then, bounded by the reply's cap, not by the idle limit.
                idle_s = None if tools else settings.DISPATCH_EVENT_IDLE_S
                try:
                    event = await asyncio.wait_for(anext(events), idle_s)
                except StopAsyncIteration:
                    break
                if isinstance(event, ToolExecutionStart):
                    tools.add(event.toolCallId)
                elif isinstance(event, ToolExecutionEnd):
                    tools.discard(event.toolCallId)
                for payload in payloads_for(event, dispatch_id, narration):
                    await writer.append(convo.stream, new_entry(payload, author=convo.bot.id))
                kind = getattr(event, "type", "")
                role = event.message.get("role") if kind == "message_end" else None
                if role == "assistant":
                    messages.append(event.message)
                elif role == "user" and steering.queued:
                    # Pi put a steered message before the model: now the reply has taken it.
                    batch = steering.queued.pop(0)
                    steering.taken.extend(batch)
                    ids = [e.id for e in batch]
                    steered = DispatchSteered(dispatchId=dispatch_id, entryIds=ids)
                    await writer.append(convo.stream, new_entry(steered, author=convo.bot.id))
                elif kind == "turn_end" and getattr(event, "toolResults", None):
                    queued = len(steering.queued)
                    await _steer(convo, session, steering)
                    if len(steering.queued) > queued:
                        # Pi has queued them: say so until it takes them in.
                        phase = DispatchPhase(
                            dispatchId=dispatch_id, phase="steering", round=narration.round
                        )
                        await writer.append(convo.stream, new_entry(phase, author=convo.bot.id))
                elif kind == "agent_end":
                    ended = True
                    break
    except TimeoutError:
        trace.close("Pi stopped answering in time.")
        await session.close()
        return Attempt(False, "timeout", "Pi stopped answering in time.", messages=messages)
    except PiError as exc:
        trace.close(str(exc))
        await session.close()
        return Attempt(False, "process", str(exc), retryable=True, messages=messages)
    except BaseException:
        trace.close("The reply was interrupted.")
        await session.close()
        raise
    trace.close("" if ended else "Pi exited before finishing.")
    if ended:
        failure = assistant_failure(messages[-1]) if messages else "Pi produced no answer."
        if failure:
            await session.close()
            return Attempt(False, "model", failure, retryable=True, messages=messages)
        if pool is not None and pool.warm.keep(*key, warm):
            return Attempt(True, messages=messages)  # kept warm for the next reply here
        # Pi has said everything: post the answer while it shuts down, not after.
        closing = asyncio.get_running_loop().create_task(session.close())
        return Attempt(True, messages=messages, closing=closing)
    code = await session.close()
    return Attempt(False, "process", f"Pi exited ({code}) before finishing.", retryable=True)


async def _prepared(convo: Conversation, writer, session: PiSession) -> None:
    """The attempt's environment in the log, then the session's mark moved: only after a
    fenced append, so a holder fenced off never moves it (``dispatch.session_mark``)."""
    prepared = EnvironmentPrepared(agentId=convo.bot.id, isolation=session.isolation)
    await writer.append(convo.stream, new_entry(prepared, author=convo.bot.id))
    await in_thread(save_mark, convo)


async def _steer(convo, session, steering: Steering) -> None:
    """Between tool rounds: hand Pi the messages that arrived since we last looked.

    Once Pi has queued them the reply narrates ``steering``; they count as taken in
    (``signal.dispatch.steered``) only when Pi puts them before the model (its user
    ``message_end``). A steer that reaches Pi after its last turn is never read; its
    messages stay undecided, and the director passes over them when this reply ends, as it
    does after every reply. Where to look next is kept across attempts (``Steering``)."""
    arrived, steering.offset = await new_messages(convo, steering.offset)
    arrived = arrived[-PASS_WINDOW:]  # older ones stay undecided: the director settles them
    if arrived:
        await session.steer(convo.render(arrived))
        steering.queued.append(arrived)
