"""Reading an untrusted zip with bounds: member names, sizes, ratios, lines.

An archive or a Slack export is someone's file. Nothing in it is trusted until checked:
member names may not climb out (``..``, absolute paths, backslashes) and are never used as
paths here anyway; the declared sizes are bounded and the bytes actually read are counted
(a header may lie); a member that inflates past ``MAX_RATIO`` is a zip bomb; a JSON
document is read whole only under ``MAX_DOC_BYTES``, and a log line under the entry limit.
Every refusal is an ``ArchiveError`` that names the member (and the line).
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from collections.abc import Iterator
from pathlib import PurePosixPath

from django.conf import settings

from threads.contract import MAX_ENTRY_BYTES

MAX_MEMBERS = 500_000
MAX_DOC_BYTES = 64 * 1024 * 1024  # one JSON document (threads.json, a Slack day file)
MAX_LINE_BYTES = MAX_ENTRY_BYTES + 1024
MAX_RATIO = 200  # uncompressed / compressed, for members past 1 MiB
CHUNK = 1024 * 1024
SAFE_NAME = re.compile(r"^[^\x00-\x1f\\:*?\"<>|]{1,400}$")


class ArchiveError(ValueError):
    """A file that can't be imported; ``str()`` says which member (and line) and why."""


def max_total_bytes() -> int:
    return getattr(settings, "ARBE_ARCHIVE_MAX_BYTES", 20 * 1024**3)


def check_name(name: str) -> str:
    path = PurePosixPath(name)
    if (
        not SAFE_NAME.match(name)
        or name.startswith("/")
        or any(part in ("..", "") for part in name.rstrip("/").split("/"))
        or path.is_absolute()
    ):
        raise ArchiveError(f"{name!r}: a member name that is not a plain relative path")
    return name


class SafeZip:
    """A zip opened for reading with every member checked up front."""

    def __init__(self, path, *, max_bytes: int | None = None):
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise ArchiveError(f"not a readable zip file: {exc}") from None
        infos = self.zip.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ArchiveError(f"{len(infos):,} members; at most {MAX_MEMBERS:,} are read")
        limit = max_bytes or max_total_bytes()
        total = 0
        self.members: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = check_name(info.filename)
            if info.flag_bits & 0x1:
                raise ArchiveError(f"{name}: encrypted members are not read")
            if info.file_size > CHUNK and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise ArchiveError(f"{name}: inflates {MAX_RATIO}× past its size (a zip bomb?)")
            total += info.file_size
            if total > limit:
                raise ArchiveError(f"more than {limit:,} bytes uncompressed; refused")
            if name in self.members:
                raise ArchiveError(f"{name}: appears twice")
            if not name.endswith("/"):
                self.members[name] = info

    def close(self) -> None:
        self.zip.close()

    def __enter__(self) -> SafeZip:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def names(self) -> list[str]:
        return list(self.members)

    def _chunks(self, name: str, limit: int) -> Iterator[bytes]:
        info = self.members.get(name)
        if info is None:
            raise ArchiveError(f"{name}: missing from the archive")
        if info.file_size > limit:
            raise ArchiveError(f"{name}: {info.file_size:,} bytes; at most {limit:,} are read")
        seen = 0
        try:
            with self.zip.open(info) as f:
                while chunk := f.read(CHUNK):
                    seen += len(chunk)
                    if seen > info.file_size or seen > limit:
                        raise ArchiveError(f"{name}: holds more bytes than its header says")
                    yield chunk
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ArchiveError(f"{name}: unreadable ({exc})") from None

    def read(self, name: str, limit: int = MAX_DOC_BYTES) -> bytes:
        return b"".join(self._chunks(name, limit))

    def sha256(self, name: str) -> tuple[str, int]:
        digest, size = hashlib.sha256(), 0
        for chunk in self._chunks(name, max_total_bytes()):
            digest.update(chunk)
            size += len(chunk)
        return digest.hexdigest(), size

    def lines(self, name: str) -> Iterator[tuple[int, bytes]]:
        """(line number from 1, the line without its newline), each bounded; blank lines
        are skipped."""
        rest, number = b"", 0
        for chunk in self._chunks(name, max_total_bytes()):
            rest += chunk
            *whole, rest = rest.split(b"\n")
            for line in whole:
                number += 1
                if len(line) > MAX_LINE_BYTES:
                    raise ArchiveError(
                        f"{name}, line {number}: longer than {MAX_LINE_BYTES:,} bytes"
                    )
                if line.strip():
                    yield number, line
            if len(rest) > MAX_LINE_BYTES:
                raise ArchiveError(
                    f"{name}, line {number + 1}: longer than {MAX_LINE_BYTES:,} bytes"
                )
        if rest.strip():
            yield number + 1, rest
