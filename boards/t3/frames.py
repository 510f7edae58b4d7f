"""Effect RPC wire frames (Effect 4.x, JSON serialization) as T3 Code's ``/ws`` speaks them.

One JSON object per text frame; the server also accepts an array of messages in one
frame, and this decoder accepts one from it. Unknown fields are ignored, so newer
servers that add fields still decode.
"""

from __future__ import annotations

from typing import Any

import msgspec

# -- client → server -----------------------------------------------------------------------


class Request(msgspec.Struct, tag_field="_tag", tag="Request"):
    id: str
    tag: str
    payload: Any
    headers: list = msgspec.field(default_factory=list)


class Ack(msgspec.Struct, tag_field="_tag", tag="Ack"):
    requestId: str  # noqa: N815 — wire name


class Interrupt(msgspec.Struct, tag_field="_tag", tag="Interrupt"):
    requestId: str  # noqa: N815


class Ping(msgspec.Struct, tag_field="_tag", tag="Ping"):
    pass


class Eof(msgspec.Struct, tag_field="_tag", tag="Eof"):
    pass


# -- server → client -----------------------------------------------------------------------


class Fail(msgspec.Struct, tag_field="_tag", tag="Fail"):
    error: Any = None


class Die(msgspec.Struct, tag_field="_tag", tag="Die"):
    defect: Any = None


class Interrupted(msgspec.Struct, tag_field="_tag", tag="Interrupt"):
    fiberId: Any = None  # noqa: N815


Cause = Fail | Die | Interrupted


class Success(msgspec.Struct, tag_field="_tag", tag="Success"):
    value: Any = None


class Failure(msgspec.Struct, tag_field="_tag", tag="Failure"):
    cause: list[Cause] = msgspec.field(default_factory=list)


class Chunk(msgspec.Struct, tag_field="_tag", tag="Chunk"):
    requestId: str | int  # noqa: N815
    values: list[Any]


class Exit(msgspec.Struct, tag_field="_tag", tag="Exit"):
    requestId: str | int  # noqa: N815
    exit: Success | Failure


class Defect(msgspec.Struct, tag_field="_tag", tag="Defect"):
    defect: Any = None


class Pong(msgspec.Struct, tag_field="_tag", tag="Pong"):
    pass


FromServer = Chunk | Exit | Defect | Pong | Ping
_decoder = msgspec.json.Decoder(FromServer | list[FromServer])
_encoder = msgspec.json.Encoder()


def decode(data: str | bytes) -> list[FromServer]:
    """The messages of one frame; raises ``msgspec.DecodeError`` for anything else."""
    decoded = _decoder.decode(data)
    return decoded if isinstance(decoded, list) else [decoded]


def encode(message) -> str:
    return _encoder.encode(message).decode()


def loose_request_id(data: str | bytes) -> str | None:
    """The ``requestId`` of a frame that failed to decode, when one can be read at all."""
    try:
        loose = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return None
    if isinstance(loose, dict) and isinstance(loose.get("requestId"), str | int):
        return str(loose["requestId"])
    return None
