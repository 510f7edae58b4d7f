"""The Now panel's plain words: what a reply is doing, and the panel's one-line summary."""

from django import template
from django.utils.html import format_html, format_html_join

from threads.states import label
from threads.status import PHASE_WORDS, waiting_message

register = template.Library()

DOING = PHASE_WORDS


@register.filter
def state_label(state: str) -> str:
    """A status as people read it: ``done`` is "replied"."""
    return label(state)


@register.filter
def deciding(count: int) -> str:
    """ "Deciding who answers 1 waiting message.": a mention waiting for the director."""
    return waiting_message(int(count or 0))


@register.filter
def spend(tokens: int, cost: float = 0.0) -> str:
    """``1,410 tokens · $0.0123``: the same words the ``arbe`` command prints."""
    n = int(tokens or 0)
    words = f"{n:,} token{'' if n == 1 else 's'}"
    return words + (f" · ${cost:.4f}" if cost else "")


@register.filter
def reply_doing(reply, now) -> str:
    """ "is thinking", "is running `bash`": the reply's phase as words (escaped HTML)."""
    if reply.phase == "tool":
        tools = [c.name for c in now.toolCalls if c.dispatchId == reply.dispatchId and c.name]
        if tools:
            return format_html("is running <code>{}</code>", tools[-1])
        return "is running a tool"
    return DOING.get(reply.phase, "is replying")


RUN_DOING = {
    "thinking": "thinking",
    "tool": "running a tool",
    "answering": "writing",
    "steering": "reading new messages",
    "retrying": "trying again",
}


@register.filter
def run_doing(run) -> str:
    """ "is running a task · thinking, step 2": a delegated run's phase and round as words."""
    doing = RUN_DOING.get(run.phase or "")
    if not doing:
        return "is running a task"
    step = f", step {run.round}" if run.round else ""
    return f"is running a task · {doing}{step}"


@register.simple_tag
def now_line(now, reply_bot, runs, owed, failed=()) -> str:
    """The most pressing thing the panel says, in one line (the phone's bar)."""
    if now.reply and reply_bot:
        return format_html("@{} {}", reply_bot.handle, reply_doing(now.reply, now))
    if runs:
        return format_html("@{} {}", runs[0]["bot"].handle, run_doing(runs[0]["run"]))
    if owed:
        handles = format_html_join(", ", "@{}", ((b.handle,) for b in owed))
        return format_html("waiting for {}", handles)
    if now.blocked and now.silence:
        return format_html("needs a person: {}", now.silence)
    if failed:
        return format_html("@{} couldn't reply", failed[0]["bot"].handle)
    if now.asking and now.waitingCount:  # someone was named: the director is deciding
        return waiting_message(now.waitingCount)
    return "Nobody is working."
