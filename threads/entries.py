"""The thread entry contract: the envelope and every payload, as typed structs.

An entry is ``{id, ts, authorId?, payload}``; ``payload.type`` selects the
struct. Three families:

- ``chat``: what people and bots say.
- ``pi.*``: Pi's transcript, kept as Pi shaped it. The legacy typing payloads
  (``pi.message_start``, ``pi.message_update``, ``pi.chunk``) decode into
  ``PiTyping`` and are never shown.
- ``signal.*``: facts arbe owns (lifecycle, dispatch, deletion).

Decoding validates: an unknown ``type`` or a bad field raises
``EntryError`` naming the field's path (``$.payload.text``). Every payload is
documented with an example in ``docs/entries.md``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

# A chat message's text limit, in characters (docs/entries.md).
MAX_CHAT_CHARS = 20_000

NonEmpty = Annotated[str, Meta(min_length=1)]
Id = Annotated[str, Meta(min_length=1, max_length=128)]


class EntryError(ValueError):
    """An entry or payload that does not meet the contract; ``str()`` names the field."""


# gc=False: entries form no reference cycles, and untracked structs make decoding a long
# thread 3-4x faster (the collector no longer walks every new entry).
class Payload(Struct, tag_field="type", forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """Base of every arbe-owned payload: strict, tagged on ``type``."""

    @property
    def type(self) -> str:
        return self.__struct_config__.tag  # type: ignore[return-value]

    shown = True


# chat ---------------------------------------------------------------------------------


class Chat(Payload, tag="chat"):
    text: Annotated[str, Meta(min_length=1, max_length=MAX_CHAT_CHARS)]


# pi.* (Pi's own shapes; unknown fields are Pi's business, so they pass) ----------------


class PiPayload(Struct, tag_field="type", omit_defaults=True, gc=False):
    dispatchId: str | None = None

    @property
    def type(self) -> str:
        return self.__struct_config__.tag  # type: ignore[return-value]

    shown = True


class PiAssistant(PiPayload, tag="pi.assistant"):
    """An assistant message as Pi emitted it at ``message_end``."""

    message: dict[str, Any] = msgspec.field(default_factory=dict)


class PiToolResult(PiPayload, tag="pi.tool_result"):
    """A tool result message as Pi emitted it."""

    message: dict[str, Any] = msgspec.field(default_factory=dict)


class PiCompaction(PiPayload, tag="pi.compaction"):
    reason: str = ""
    result: dict[str, Any] | None = None
    aborted: bool = False


class PiTyping(PiPayload):
    """Legacy typing text from old threads: parses, is never shown."""

    shown = False


class PiMessageStart(PiTyping, tag="pi.message_start"):
    pass


class PiMessageUpdate(PiTyping, tag="pi.message_update"):
    pass


class PiChunk(PiTyping, tag="pi.chunk"):
    pass


# signal.* -------------------------------------------------------------------------------


class EntryDeleted(Payload, tag="signal.entry.deleted"):
    """A tombstone: ``entryId`` names the deleted chat; the entry's author deleted it."""

    entryId: Id


class ThreadCreated(Payload, tag="signal.thread.created"):
    title: str
    parentThreadId: str | None = None


class ThreadRenamed(Payload, tag="signal.thread.renamed"):
    title: NonEmpty


class ThreadArchived(Payload, tag="signal.thread.archived"):
    pass


class ThreadRunState(Payload, tag="signal.thread.run_state"):
    """A delegated coding run's state: on its child thread, and on the parent (with
    ``childThreadId``) when the run is claimed and when it ends."""

    runId: Id
    state: Literal["claimed", "running", "finished", "failed", "dead"]
    agentId: str | None = None
    task: str | None = None
    childThreadId: str | None = None


class ThreadPiFailed(Payload, tag="signal.thread.pi_failed"):
    error: str
    attempt: int = 1
    dispatchId: str | None = None
    runId: str | None = None


class ThreadOrphaned(Payload, tag="signal.thread.orphaned"):
    """A run or reply found with nobody behind it (its process is gone)."""

    reason: str
    runId: str | None = None
    dispatchId: str | None = None


class ThreadChildFinished(Payload, tag="signal.thread.child_finished"):
    childThreadId: Id
    report: str
    runId: str | None = None
    ok: bool = True


class DirectorDecided(Payload, tag="signal.thread_director.decided"):
    """A director pass: which bots owe a reply, up to which entry it read."""

    picked: list[str]
    upTo: Id
    reason: str | None = None
    entryIds: list[str] = msgspec.field(default_factory=list)


class DirectorOutcome(Payload, tag="signal.thread_director.outcome"):
    """How a pass ended; ``picked`` empty means nobody speaks, and ``reason`` says why.

    ``blocked`` marks a reason only a person can clear (a mentioned bot isn't configured).
    """

    upTo: Id
    picked: list[str] = msgspec.field(default_factory=list)
    reason: str | None = None
    blocked: bool = False


class DispatchStarted(Payload, tag="signal.dispatch.started"):
    dispatchId: Id
    agentId: Id
    entryIds: list[str]
    round: Annotated[int, Meta(ge=0)] = 0


class DispatchPhase(Payload, tag="signal.dispatch.phase"):
    dispatchId: Id
    phase: Literal["thinking", "tool", "answering", "steering", "retrying"]
    round: Annotated[int, Meta(ge=0)] = 0
    tool: str | None = None


class DispatchSteered(Payload, tag="signal.dispatch.steered"):
    dispatchId: Id
    entryIds: list[str]


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
    stage: Literal["wake", "director", "spawn", "model", "process", "timeout", "post"]
    error: str
    attempt: Annotated[int, Meta(ge=1)] = 1
    dispatchId: str | None = None
    final: bool = True


class EnvironmentPrepared(Payload, tag="signal.environment.prepared"):
    """A bot's workspace for this thread is ready (``isolation``: bubblewrap or none)."""

    agentId: Id
    isolation: Literal["bubblewrap", "none"]


class FilesChanged(Payload, tag="signal.files.changed"):
    """Files a run wrote in its workspace, relative paths."""

    paths: list[str]
    runId: str | None = None


class HouseMemberAdded(Payload, tag="signal.house.member_added"):
    agentId: Id


class HouseMemberRemoved(Payload, tag="signal.house.member_removed"):
    agentId: Id


AnyPayload = (
    Chat
    | PiAssistant
    | PiToolResult
    | PiCompaction
    | PiMessageStart
    | PiMessageUpdate
    | PiChunk
    | EntryDeleted
    | ThreadCreated
    | ThreadRenamed
    | ThreadArchived
    | ThreadRunState
    | ThreadPiFailed
    | ThreadOrphaned
    | ThreadChildFinished
    | DirectorDecided
    | DirectorOutcome
    | DispatchStarted
    | DispatchPhase
    | DispatchSteered
    | DispatchFinished
    | DispatchFailed
    | EnvironmentPrepared
    | FilesChanged
    | HouseMemberAdded
    | HouseMemberRemoved
)

PAYLOAD_TYPES: dict[str, type] = {
    cls.__struct_config__.tag: cls
    for cls in AnyPayload.__args__  # type: ignore[attr-defined]
}


class Entry(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """One thread entry. ``id`` is the dedup key; ``ts`` is unix ms set by the server."""

    id: Id
    ts: Annotated[int, Meta(ge=0)]
    payload: AnyPayload
    authorId: str | None = None

    @property
    def type(self) -> str:
        return self.payload.type


_entry_decoder = msgspec.json.Decoder(Entry)
_entries_decoder = msgspec.json.Decoder(list[Entry])
_payload_decoder = msgspec.json.Decoder(AnyPayload)
_encoder = msgspec.json.Encoder()


def _decode(decoder: msgspec.json.Decoder, data: bytes | str):
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise EntryError(str(exc)) from None
    except msgspec.DecodeError as exc:
        raise EntryError(f"Malformed JSON: {exc}") from None


def decode_entry(data: bytes | str) -> Entry:
    return _decode(_entry_decoder, data)


def decode_entries(data: bytes | str) -> list[Entry]:
    """Decode a JSON array of entries (the body of a JSON-mode stream read)."""
    return _decode(_entries_decoder, data)


def decode_payload(data: bytes | str) -> AnyPayload:
    return _decode(_payload_decoder, data)


def convert_payload(obj: Any) -> AnyPayload:
    """Validate an already-parsed payload (a dict from a form or JSON body)."""
    try:
        return msgspec.convert(obj, AnyPayload)
    except msgspec.ValidationError as exc:
        raise EntryError(str(exc).replace("`$", "`$.payload", 1)) from None


def convert_entry(obj: Any) -> Entry:
    try:
        return msgspec.convert(obj, Entry)
    except msgspec.ValidationError as exc:
        raise EntryError(str(exc)) from None


def encode_entry(entry: Entry) -> bytes:
    return _encoder.encode(entry)


def encode_entries(entries: list[Entry]) -> bytes:
    return _encoder.encode(entries)


def to_builtins(entry: Entry) -> dict[str, Any]:
    return msgspec.to_builtins(entry)


def first_of_each_id(entries: list[Entry]) -> list[Entry]:
    """Keep the first entry of each id: a reader that meets an id twice keeps the first."""
    seen: set[str] = set()
    kept = []
    for entry in entries:
        if entry.id not in seen:
            seen.add(entry.id)
            kept.append(entry)
    return kept
