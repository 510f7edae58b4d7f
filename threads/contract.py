"""The entry contract's ground: its limits, the id alphabet, the error every refusal
raises, and the base of arbe's own payloads (``threads.entries`` and ``threads.signals``
build on it)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

# A chat message's text limit, in characters (docs/entries.md).
MAX_CHAT_CHARS = 20_000
# One encoded entry, whatever its kind: big enough for a long tool result, small enough
# that no single entry can make a page or a fold slow.
MAX_ENTRY_BYTES = 256 * 1024
# At most this many files ride on one chat entry (the upload limit may be lower).
MAX_ATTACHMENTS = 20

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
