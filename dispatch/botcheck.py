"""Is a bot able to answer? Checked when its configuration is set, and on demand.

``validate_bot_config`` refuses what can't work before it is saved, judging names only: a
provider Pi doesn't know, a key variable bots may not use (``dispatch/pi/keys.py``: the
server's own settings never, others only by the operator's prefix or list). Whether the
variable is set is not part of the answer, so it tells no one which variables exist; a
missing key fails the reply, or the check. ``check_bot`` makes a one-token call through Pi
with the bot's own configuration and says how it went, in a line fit for a page: the
answer (its first ``ANSWER_CHARS``; the call stops there), or what failed, never where on
the server.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ValidationError

from dispatch.pi.providers import config_problem, setting_problem
from threads.failures import scrub, short_reason

CHECK_PROMPT = "Answer with the single word OK."
CHECK_TIMEOUT_S = 60.0
ANSWER_CHARS = 200  # of the answer shown: the whole of a short one, never a page of text


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    text: str


def agent_dir() -> Path:
    from dispatch.conversation import ensure_agent_dir

    return ensure_agent_dir()


def problem_for(provider: str, api_key_env: str) -> tuple[str, str] | None:
    """What keeps the bot from answering now (its key included)."""
    return config_problem(provider, api_key_env, agent_dir())


def validate_bot_config(provider: str, api_key_env: str) -> None:
    """Raise ``ValidationError({field: message})`` for a configuration Pi can't run."""
    problem = setting_problem(provider, api_key_env, agent_dir())
    if problem is not None:
        field, message = problem
        raise ValidationError({field: [message[0].upper() + message[1:] + "."]})


async def check_bot(bot) -> CheckResult:
    """One short call through Pi with ``bot``'s provider, model and key."""
    from dispatch.conversation import bot_env
    from dispatch.pi.decode import assistant_failure
    from dispatch.pi.events import AgentEnd, MessageEnd, MessageUpdate
    from dispatch.pi.layout import bot_agent_dir
    from dispatch.pi.process import PiConfig, PiError, PiSession

    if not (bot.provider and bot.model):
        return CheckResult(False, f"@{bot.handle} has no provider and model yet.")
    problem = problem_for(bot.provider, bot.api_key_env)
    if problem is not None:
        return CheckResult(False, f"@{bot.handle} can't answer: {problem[1]}.")
    began = time.monotonic()
    source = agent_dir()
    with tempfile.TemporaryDirectory(prefix="arbe-check-") as scratch:
        config = PiConfig(
            provider=bot.provider,
            model=bot.model,
            instructions="",
            session_file=Path(scratch) / "session" / "check.jsonl",
            workspace=Path(scratch) / "workspace",
            agent_dir=bot_agent_dir(bot, source),
            env=bot_env(bot, source),
            tools=(),
        )
        failure, said = None, ""
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_S):
                async with await PiSession.start(config) as session:
                    events = session.events()
                    await session.prompt(CHECK_PROMPT)
                    async for event in events:
                        if isinstance(event, MessageUpdate):
                            said += event.assistantMessageEvent.delta or ""
                            if len(said) > ANSWER_CHARS:  # enough to show: stop paying
                                await session.abort()
                                break
                        elif isinstance(event, MessageEnd) and (
                            event.message.get("role") == "assistant"
                        ):
                            failure = assistant_failure(event.message)
                            break  # the whole answer: the owner reads what the bot said
                        elif isinstance(event, AgentEnd):
                            break
        except TimeoutError:
            failure = "no answer within a minute"
        except PiError as exc:
            failure = str(exc)
    seconds = time.monotonic() - began
    if failure:
        return CheckResult(False, f"@{bot.handle} couldn't answer: {short_reason(failure)}.")
    if not said.strip():
        return CheckResult(False, f"@{bot.handle} answered with nothing.")
    answer = " ".join(scrub(said).split())
    if len(answer) > ANSWER_CHARS:
        answer = answer[: ANSWER_CHARS - 1].rstrip() + "…"
    return CheckResult(True, f"@{bot.handle} answered “{answer}” in {seconds:.1f} s.")
