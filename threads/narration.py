"""Who is who in a thread, and the short line each signal reads as.

Plain Python over the entry contract (no Django), shared by the pages' fragments
and the ``arbe`` command.
"""

from __future__ import annotations

from dataclasses import dataclass

from threads import entries as E
from threads.failures import is_config_error, short_reason


@dataclass(frozen=True)
class Name:
    display: str
    handle: str
    is_bot: bool = False
    active: bool = True


UNKNOWN = Name("someone", "someone")


class Names(dict):
    """Agent id -> ``Name`` for a house's people and bots; unknown ids read as "someone"."""

    def of(self, agent_id: str | None) -> Name:
        return self.get(agent_id, UNKNOWN) if agent_id else UNKNOWN


CONFIG_HINT = "an owner can fix it on the members page"
LEGACY_NO_MENTION = "No bot was mentioned."


def too_old(count: int) -> str:
    """The line for a backlog settled unanswered (``DirectorOutcome.tooOld``)."""
    if count == 1:
        return "1 older message was not answered: too old."
    return f"{count:,} older messages were not answered: too old."


NAMED = 10  # members a line names; the rest are counted


def named(ids: list[str], names: Names) -> str:
    """ "Mia, Olive": by name, at most ``NAMED`` of them."""
    shown = ", ".join(sorted((names.of(i).display for i in ids), key=str.lower)[:NAMED])
    return shown + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")


def narration(p, names: Names, author: str | None = None) -> str | None:
    """A short line for a signal, or None for signals the panel alone shows.

    ``author`` is the entry's ``authorId``: a failed reply is told as its bot's.
    """
    match p:
        case E.ThreadCreated(title=title):
            return f"Thread started: {title}"
        case E.ThreadRenamed(title=title):
            return f"{names.of(author).display} renamed the thread to “{title}”"
        case E.ThreadArchived(archived=archived):
            return f"{names.of(author).display} {'' if archived else 'un'}archived the thread."
        case E.ThreadMadePrivate(memberIds=ids, direct=True):
            return f"Only {named(ids, names)} read this direct conversation."
        case E.ThreadMadePrivate(memberIds=ids):
            return f"{names.of(author).display} made this thread private for {named(ids, names)}."
        case E.ThreadMemberAdded(agentId=agent):
            return f"{names.of(author).display} added {names.of(agent).display}."
        case E.ThreadMemberRemoved(agentId=agent) if agent == author:
            return f"{names.of(agent).display} left this thread."
        case E.ThreadMemberRemoved(agentId=agent):
            return f"{names.of(author).display} removed {names.of(agent).display}."
        case E.ThreadRunState(state=state, agentId=agent, task=task):
            who = f"@{names.of(agent).handle} " if agent else ""
            return f"Run {who}{state}" + (f": {task[:200]}" if task else "")
        case E.ThreadPiFailed(dispatchId=None, error=error):
            return f"Pi failed: {short_reason(error)}"
        case E.ThreadPiFailed():
            return None  # a reply's process: its dispatch.failed tells the story once
        case E.ThreadOrphaned(reason=reason):
            return f"Stopped: {reason}"
        case E.ThreadChildFinished(report=report, ok=ok):
            return ("Run finished: " if ok else "Run failed: ") + report[:500]
        case E.DirectorOutcome(reason=reason) if reason == LEGACY_NO_MENTION:
            return None  # older threads said so after every ordinary message
        case E.DirectorOutcome(picked=[], tooOld=count) if count:
            return too_old(count)
        case E.DirectorOutcome(picked=[], reason=reason) if reason:
            return f"Nobody speaks: {reason}"
        case E.DispatchSteered(entryIds=ids):
            n = len(ids)
            return f"The reply took in {n} new message{'' if n == 1 else 's'}."
        case E.DispatchFinished(spend=spend):
            return f"Reply finished · {spend.totalTokens:,} tokens · ${spend.costUsd:.4f}"
        case E.DispatchFailed(stage="director", error=error):
            return f"The director couldn't decide: {short_reason(error)}"
        case E.DispatchFailed(stage="worker", final=False):
            who = f"@{names.of(author).handle}" if author in names else "The reply"
            return f"{who} was interrupted; answering again"
        case E.DispatchFailed(error=error, final=True):
            who = f"@{names.of(author).handle}" if author in names else "The reply"
            hint = f"; {CONFIG_HINT}" if is_config_error(error) else ""
            return f"{who} couldn't reply: {short_reason(error)}{hint}"
        case E.FilesPurged(attachmentIds=ids):
            files = f"{len(ids)} file{'s' * (len(ids) != 1)}"
            if author is None:  # the server's sweep (clean_attachments)
                return f"{files} of a deleted message removed for good."
            who = names.of(author).display if author in names else "Someone"
            return f"{who} removed {files} of a message for good."
        case E.FilesChanged(paths=paths):
            return "Files changed: " + ", ".join(paths[:10])
        case E.HouseMemberAdded(agentId=agent):
            return f"{names.of(agent).display} joined."
        case E.HouseMemberRemoved(agentId=agent):
            return f"{names.of(agent).display} left."
    return None
