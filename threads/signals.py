"""The ``signal.*`` payloads: facts arbe owns about entries, threads, the director,
replies, workspaces, files and houses (``docs/entries.md`` has each with an example).
``threads.entries`` gathers them with chat and Pi's payloads into the one contract."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta, Struct

from threads.contract import MAX_ATTACHMENTS, MAX_CHAT_CHARS, Id, Line, Payload, Text


class EntryDeleted(Payload, tag="signal.entry.deleted"):
    """A tombstone: ``entryId`` names the deleted chat; the entry's author deleted it."""

    entryId: Id


class EntryEdited(Payload, tag="signal.entry.edited"):
    """An edit: ``text`` replaces what the chat ``entryId`` says; only its author edits it.
    The chat and every earlier edit stay in the log; views show the latest text."""

    entryId: Id
    text: Annotated[str, Meta(min_length=1, max_length=MAX_CHAT_CHARS)]


class EntryReaction(Payload, tag="signal.entry.reaction"):
    """The author reacted to the chat ``entryId`` with ``emoji`` (one emoji grapheme,
    checked by ``threads.reactions``), or took that reaction back (``on`` false)."""

    entryId: Id
    emoji: Annotated[str, Meta(min_length=1, max_length=32)]
    on: bool = True


class ThreadCreated(Payload, tag="signal.thread.created"):
    title: Annotated[str, Meta(max_length=200)]
    parentThreadId: Id | None = None


class ThreadRenamed(Payload, tag="signal.thread.renamed"):
    title: Annotated[str, Meta(min_length=1, max_length=200)]


class ThreadArchived(Payload, tag="signal.thread.archived"):
    archived: bool = True  # false: brought back from the archive


# Who may read a thread (``threads.readers`` folds these into the access table).
MAX_THREAD_MEMBERS = 1_000


class ThreadMadePrivate(Payload, tag="signal.thread.made_private"):
    """From here on only ``memberIds`` (people and bots of the house) read the thread.
    ``direct``: a direct conversation, whose set of people is its identity (one per set)."""

    memberIds: Annotated[list[Id], Meta(min_length=1, max_length=MAX_THREAD_MEMBERS)]
    direct: bool = False


class ThreadMemberAdded(Payload, tag="signal.thread.member_added"):
    """``agentId`` reads the private thread from now on (its whole history)."""

    agentId: Id


class ThreadMemberRemoved(Payload, tag="signal.thread.member_removed"):
    """``agentId`` no longer reads the private thread; live reads end."""

    agentId: Id


class ThreadRunState(Payload, tag="signal.thread.run_state"):
    """A delegated coding run's state: on its child thread, and on the parent (with
    ``childThreadId``) when the run is claimed and when it ends."""

    runId: Id
    state: Literal["claimed", "running", "finished", "failed", "dead"]
    agentId: Id | None = None
    task: Text | None = None
    childThreadId: Id | None = None


class ThreadPiFailed(Payload, tag="signal.thread.pi_failed"):
    error: Line
    attempt: Annotated[int, Meta(ge=1, le=1_000)] = 1
    dispatchId: Id | None = None
    runId: Id | None = None


class ThreadOrphaned(Payload, tag="signal.thread.orphaned"):
    """A run or reply found with nobody behind it (its process is gone)."""

    reason: Line
    runId: Id | None = None
    dispatchId: Id | None = None


class ThreadTakenOver(Payload, tag="signal.thread.taken_over"):
    """Another engine holds the thread now; written at its new lease ``epoch`` before it
    reads the log, so nothing its stopped holder writes can land after it."""

    epoch: Annotated[int, Meta(ge=1, le=2**53 - 1)]


class ThreadChildFinished(Payload, tag="signal.thread.child_finished"):
    childThreadId: Id
    report: Text
    runId: Id | None = None
    ok: bool = True


class DirectorDecided(Payload, tag="signal.thread_director.decided"):
    """A director pass: which bots owe a reply, up to which entry it read."""

    picked: list[Id]
    upTo: Id
    reason: Line | None = None
    entryIds: list[Id] = msgspec.field(default_factory=list)


class DirectorOutcome(Payload, tag="signal.thread_director.outcome"):
    """How a pass ended; ``picked`` empty means nobody speaks, and ``reason`` says why.

    ``blocked`` marks a reason only a person can clear (a mentioned bot isn't configured).
    ``tooOld`` (a count) marks a backlog settled unanswered: the waiting messages up to
    ``upTo`` were older than the window a pass decides over; the pass goes on over the rest.
    """

    upTo: Id
    picked: list[Id] = msgspec.field(default_factory=list)
    reason: Line | None = None
    blocked: bool = False
    tooOld: Annotated[int, Meta(ge=0)] = 0


class DispatchStarted(Payload, tag="signal.dispatch.started"):
    dispatchId: Id
    agentId: Id
    entryIds: list[Id]
    round: Annotated[int, Meta(ge=0)] = 0


class DispatchPhase(Payload, tag="signal.dispatch.phase"):
    dispatchId: Id
    phase: Literal["thinking", "tool", "answering", "steering", "retrying"]
    round: Annotated[int, Meta(ge=0)] = 0
    tool: Annotated[str, Meta(max_length=200)] | None = None


class DispatchSteered(Payload, tag="signal.dispatch.steered"):
    dispatchId: Id
    entryIds: list[Id]


class Spend(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """Model usage and its cost in USD, from Pi's ``usage``."""

    input: int = 0
    output: int = 0
    cacheRead: int = 0
    cacheWrite: int = 0
    totalTokens: int = 0
    costUsd: float = 0.0


class DispatchFinished(Payload, tag="signal.dispatch.finished"):
    dispatchId: Id
    spend: Spend = msgspec.field(default_factory=Spend)


class DispatchFailed(Payload, tag="signal.dispatch.failed"):
    stage: Literal["wake", "director", "spawn", "model", "process", "timeout", "post", "worker"]
    error: Line
    attempt: Annotated[int, Meta(ge=1)] = 1
    dispatchId: Id | None = None
    final: bool = True


class EnvironmentPrepared(Payload, tag="signal.environment.prepared"):
    """A bot's workspace for this thread is ready (``isolation``: bubblewrap or none)."""

    agentId: Id
    isolation: Literal["bubblewrap", "none"]


class FilesChanged(Payload, tag="signal.files.changed"):
    """Files a run wrote in its workspace, relative paths."""

    paths: Annotated[list[Annotated[str, Meta(max_length=1_000)]], Meta(max_length=1_000)]
    runId: Id | None = None


class FilesPurged(Payload, tag="signal.files.purged"):
    """A message's stored files were removed (by its author or an owner, with the message's
    deletion, or by the server's sweep for a deleted message); the log keeps their names."""

    entryId: Id
    attachmentIds: Annotated[list[Id], Meta(min_length=1, max_length=MAX_ATTACHMENTS)]


class HouseMemberAdded(Payload, tag="signal.house.member_added"):
    agentId: Id


class HouseMemberRemoved(Payload, tag="signal.house.member_removed"):
    agentId: Id
