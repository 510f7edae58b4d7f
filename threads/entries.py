"""The thread entry contract: the envelope and every payload, as typed structs.

An entry is ``{id, ts, authorId?, payload}``; ``payload.type`` selects the
struct. Three families:

- ``chat``: what people and bots say.
- ``pi.*``: Pi's transcript, kept as Pi shaped it. The legacy typing payloads
  (``pi.message_start``, ``pi.message_update``, ``pi.chunk``) decode into
  ``PiTyping`` and are never shown.
- ``signal.*``: facts arbe owns (lifecycle, dispatch, deletion).

The ``signal.*`` payloads live in ``threads.signals`` and the limits, the id alphabet and
``EntryError`` in ``threads.contract``; this module gathers them (every payload can be
imported from here), defines chat and Pi's payloads and the envelope, and decodes and encodes.

Decoding validates: an unknown ``type`` or a bad field raises
``EntryError`` naming the field's path (``$.payload.text``). Every payload is
documented with an example in ``docs/entries.md``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from threads import pi_shapes
from threads.contract import (  # noqa: F401 (the contract's names, re-exported)
    MAX_ATTACHMENTS,
    MAX_CHAT_CHARS,
    MAX_ENTRY_BYTES,
    EntryError,
    Id,
    Line,
    NonEmpty,
    Payload,
    Text,
)
from threads.signals import (  # noqa: F401 (re-exported: every payload is named here)
    DirectorDecided,
    DirectorOutcome,
    DispatchFailed,
    DispatchFinished,
    DispatchPhase,
    DispatchStarted,
    DispatchSteered,
    EntryDeleted,
    EntryEdited,
    EntryReaction,
    EnvironmentPrepared,
    FilesChanged,
    FilesPurged,
    HouseMemberAdded,
    HouseMemberRemoved,
    Spend,
    ThreadArchived,
    ThreadChildFinished,
    ThreadCreated,
    ThreadMadePrivate,
    ThreadMemberAdded,
    ThreadMemberRemoved,
    ThreadOrphaned,
    ThreadPiFailed,
    ThreadRenamed,
    ThreadRunState,
    ThreadTakenOver,
)

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


class Chat(Payload, tag="chat"):
    # Empty only when files are attached (__post_init__).
    text: Annotated[str, Meta(max_length=MAX_CHAT_CHARS)]
    attachments: Annotated[list[AttachmentRef], Meta(max_length=MAX_ATTACHMENTS)] = []
    # An imported message's original time (unix ms), shown as its time; the entry's ``ts``
    # stays the server's. Set only by imports (``threads.permissions.check_write``).
    sentAt: Annotated[int, Meta(ge=0, le=32_503_680_000_000)] | None = None

    def __post_init__(self):
        if not self.text and not self.attachments:
            raise ValueError("Expected `str` of length >= 1 (or files attached) - at `$.text`")


class EditedChat(Chat, tag="chat"):
    """A chat as a projection shows it after an edit: its latest text. Never decoded
    (not in ``AnyPayload``); it encodes as plain ``chat``, ``edited`` being its default."""

    edited: bool = True


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
    | ThreadMadePrivate
    | ThreadMemberAdded
    | ThreadMemberRemoved
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
