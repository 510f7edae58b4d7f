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

import re
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from threads import pi_shapes

# A chat message's text limit, in characters (docs/entries.md).
MAX_CHAT_CHARS = 20_000
# One encoded entry, whatever its kind: big enough for a long tool result, small enough
# that no single entry can make a page or a fold slow.
MAX_ENTRY_BYTES = 256 * 1024

# Ids travel in URLs, DOM ids and CSS selectors: one safe alphabet for all of them.
Id = Annotated[str, Meta(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]
NonEmpty = Annotated[str, Meta(min_length=1, max_length=1_000)]
Text = Annotated[str, Meta(max_length=MAX_CHAT_CHARS)]
Line = Annotated[str, Meta(max_length=2_000)]


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


class ImageSize(Struct, forbid_unknown_fields=True, gc=False):
    w: Annotated[int, Meta(ge=1, le=1_000_000)]
    h: Annotated[int, Meta(ge=1, le=1_000_000)]


class AttachmentRef(Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """A file carried by a chat entry: filled in by the server from its upload's row
    (``attachments.service``), never taken from a client as given."""

    id: Id
    name: Annotated[str, Meta(min_length=1, max_length=255)]
    size: Annotated[int, Meta(ge=0)]
    contentType: Annotated[str, Meta(min_length=1, max_length=100)]
    image: ImageSize | None = None


# At most this many files ride on one chat entry (the upload limit may be lower).
MAX_ATTACHMENTS = 20


class Chat(Payload, tag="chat"):
    # Empty only when files are attached (__post_init__).
    text: Annotated[str, Meta(max_length=MAX_CHAT_CHARS)]
    attachments: Annotated[list[AttachmentRef], Meta(max_length=MAX_ATTACHMENTS)] = []

    def __post_init__(self):
        if not self.text and not self.attachments:
            raise ValueError("Expected `str` of length >= 1 (or files attached) - at `$.text`")


# pi.* (Pi's own shapes; unknown fields are Pi's business, so they pass) ----------------


class PiPayload(Struct, tag_field="type", omit_defaults=True, gc=False):
    dispatchId: Id | None = None

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
    reason: Line = ""
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


class EditedChat(Chat, tag="chat"):
    """A chat as a projection shows it after an edit: its latest text. Never decoded
    (not in ``AnyPayload``); it encodes as plain ``chat``, ``edited`` being its default."""

    edited: bool = True


class ThreadCreated(Payload, tag="signal.thread.created"):
    title: Annotated[str, Meta(max_length=200)]
    parentThreadId: Id | None = None


class ThreadRenamed(Payload, tag="signal.thread.renamed"):
    title: Annotated[str, Meta(min_length=1, max_length=200)]


class ThreadArchived(Payload, tag="signal.thread.archived"):
    archived: bool = True  # false: brought back from the archive


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
    """An owner removed the stored bytes of a message's files; the log keeps their names."""

    entryId: Id
    attachmentIds: Annotated[list[Id], Meta(min_length=1, max_length=MAX_ATTACHMENTS)]


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
    | EntryEdited
    | EntryReaction
    | ThreadCreated
    | ThreadRenamed
    | ThreadArchived
    | ThreadRunState
    | ThreadPiFailed
    | ThreadOrphaned
    | ThreadTakenOver
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
    | FilesPurged
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
    authorId: Id | None = None

    @property
    def type(self) -> str:
        return self.payload.type


_entry_decoder = msgspec.json.Decoder(Entry)
_entries_decoder = msgspec.json.Decoder(list[Entry])
_payload_decoder = msgspec.json.Decoder(AnyPayload)
_encoder = msgspec.json.Encoder()


_NESTED = re.compile(r" - at `\$\.([A-Za-z]+)` - at `(\$[^`]*)`$")


def _where(message: str) -> str:
    """One path for a field a ``__post_init__`` names (msgspec adds the struct's path after)."""
    return _NESTED.sub(r" - at `\2.\1`", message)


def _decode(decoder: msgspec.json.Decoder, data: bytes | str):
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise EntryError(_where(str(exc))) from None
    except msgspec.DecodeError as exc:
        raise EntryError(f"Malformed JSON: {exc}") from None
    except RecursionError:
        raise EntryError("JSON nested too deeply - at `$`") from None


def _check_pi(entry: Entry) -> Entry:
    """Pi's messages pass as Pi shaped them, but the fields arbe reads must fit (pi_shapes)."""
    payload = entry.payload
    if isinstance(payload, PiAssistant | PiToolResult):
        try:
            pi_shapes.check_message(payload.type, payload.message)
        except msgspec.ValidationError as exc:
            raise EntryError(str(exc).replace("`$", "`$.payload.message", 1)) from None
    elif isinstance(payload, PiCompaction):
        try:
            pi_shapes.check_compaction(payload.result)
        except msgspec.ValidationError as exc:
            raise EntryError(str(exc).replace("`$", "`$.payload.result", 1)) from None
    return entry


def decode_entry(data: bytes | str) -> Entry:
    """One entry, checked whole (the envelope, its payload, the Pi shapes arbe reads)."""
    return _check_pi(_decode(_entry_decoder, data))


def decode_entries(data: bytes | str) -> list[Entry]:
    """Decode a JSON array of entries (the body of a JSON-mode stream read), all or nothing."""
    return [_check_pi(entry) for entry in _decode(_entries_decoder, data)]


def decode_payload(data: bytes | str) -> AnyPayload:
    return _decode(_payload_decoder, data)


def convert_payload(obj: Any) -> AnyPayload:
    """Validate an already-parsed payload (a dict from a form or JSON body)."""
    try:
        return msgspec.convert(obj, AnyPayload)
    except msgspec.ValidationError as exc:
        raise EntryError(_where(str(exc)).replace("`$", "`$.payload", 1)) from None
    except RecursionError:
        raise EntryError("JSON nested too deeply - at `$.payload`") from None


def convert_entry(obj: Any) -> Entry:
    try:
        return _check_pi(msgspec.convert(obj, Entry))
    except msgspec.ValidationError as exc:
        raise EntryError(_where(str(exc))) from None
    except RecursionError:
        raise EntryError("JSON nested too deeply - at `$`") from None


def encode_entry(entry: Entry) -> bytes:
    """The entry's bytes for an append, checked whole first: what the stream gets is what
    every reader can read. Struct constructors don't enforce field constraints, so the
    bytes go through the same decoder the readers use; refused entries raise ``EntryError``."""
    data = _encoder.encode(entry)
    if len(data) > MAX_ENTRY_BYTES:
        raise EntryError(f"An entry may be at most {MAX_ENTRY_BYTES} bytes of JSON - at `$`")
    decode_entry(data)
    return data


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
