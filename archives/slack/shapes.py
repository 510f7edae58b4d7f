"""The parts of a Slack workspace export that the import reads, as lenient structs
(Slack adds fields freely; only what is read is typed), and reading them with errors
that name the file and the line."""

from __future__ import annotations

import json

import msgspec
from msgspec import Struct

from archives.zipsafe import ArchiveError, SafeZip


class Profile(Struct, gc=False):
    email: str = ""
    display_name: str = ""
    real_name: str = ""


class User(Struct, gc=False):
    id: str
    name: str = ""
    real_name: str = ""
    deleted: bool = False
    is_bot: bool = False
    profile: Profile = msgspec.field(default_factory=Profile)


class Channel(Struct, gc=False):
    """A channel (``channels.json``), a private channel (``groups.json``), a direct
    conversation (``dms.json``) or a group one (``mpims.json``)."""

    id: str
    name: str = ""
    created: int = 0
    creator: str = ""
    members: list[str] = []
    is_archived: bool = False


class Edited(Struct, gc=False):
    user: str = ""
    ts: str = ""


class Reaction(Struct, gc=False):
    name: str
    users: list[str] = []


class File(Struct, gc=False):
    id: str = ""
    name: str = ""
    title: str = ""
    mimetype: str = ""
    size: int = 0
    url_private: str = ""
    url_private_download: str = ""
    mode: str = ""  # "tombstone" / "hidden_by_limit": no file to carry


class Message(Struct, gc=False):
    ts: str
    type: str = "message"
    subtype: str = ""
    user: str = ""
    bot_id: str = ""
    username: str = ""
    text: str = ""
    thread_ts: str = ""
    edited: Edited | None = None
    reactions: list[Reaction] = []
    files: list[File] = []


def _line_of(data: bytes, piece: bytes) -> int:
    at = data.find(piece)
    return data.count(b"\n", 0, at) + 1 if at >= 0 else 1


def read_list(archive: SafeZip, name: str, item_type) -> list:
    """A JSON array document, each item decoded to ``item_type``; errors name the line."""
    data = archive.read(name)
    try:
        raws = msgspec.json.decode(data, type=list[msgspec.Raw])
    except (msgspec.DecodeError, msgspec.ValidationError):
        try:
            json.loads(data)
        except json.JSONDecodeError as exc:
            raise ArchiveError(f"{name}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
        except (RecursionError, UnicodeDecodeError):
            raise ArchiveError(f"{name}, line 1: not readable JSON") from None
        raise ArchiveError(f"{name}, line 1: expected a JSON array") from None
    items = []
    for raw in raws:
        try:
            items.append(msgspec.json.decode(raw, type=item_type))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            line = _line_of(data, bytes(raw)[:200])
            raise ArchiveError(f"{name}, line {line}: {exc}") from None
    return items


def ts_ms(ts: str, where: str) -> int:
    """Slack's ``"1700000000.123456"`` as unix ms."""
    whole, _, frac = ts.partition(".")
    if not whole.isdigit() or (frac and not frac.isdigit()) or len(whole) > 11:
        raise ArchiveError(f"{where}: {ts!r} is not a Slack timestamp")
    return int(whole) * 1000 + int((frac + "000")[:3])
