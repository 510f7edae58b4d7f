"""Files a bot's run wrote, carried by its report the way a person's uploads are.

When a run ends, the worker reads what it added or changed in its workspace and uploads
the first ``ARBE_ATTACHMENTS_MAX_PER_MESSAGE`` that pass the attachment limits (by
content, as any upload) as the bot's, in the run's thread. The report chat names them and
the sandbox proxy links them to it (``attachments.service.claim``), so they are shown,
served, hidden by a tombstone and found by search like a person's files. The rest (over a
limit, removed, past the count, under a hidden or tool folder) stay named only by
``signal.files.changed``. The workspace is the bot's to write: nothing in it is followed
out of it (no symlink, at any depth, is read).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import PurePosixPath

from attachments import limits, sniff
from attachments.service import ref_of, store_upload
from threads.entries import AttachmentRef
from threads.models import Thread

logger = logging.getLogger(__name__)
# Folders a run fills with tools' output rather than work to hand over.
NOT_CARRIED = frozenset({"node_modules", "__pycache__", "venv", "dist-packages", "site-packages"})
FILES_SEEN = 20_000  # a workspace walk stops here: bounded whatever a run writes
FILES_TOLD = 1_000  # paths one signal.files.changed names (the contract's bound)


def files_in(workspace) -> dict[str, tuple[int, int]]:
    """Relative path -> (mtime ns, size) of the workspace's files, at most ``FILES_SEEN``."""
    found: dict[str, tuple[int, int]] = {}
    root = str(workspace)
    if not os.path.isdir(root):
        return found
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root)] = (info.st_mtime_ns, info.st_size)
            if len(found) >= FILES_SEEN:
                return found
    return found


def changed_files(before: dict, after: dict) -> list[str]:
    """Paths a run added, changed or removed, sorted, at most ``FILES_TOLD`` (each cut to
    the contract's 1,000 characters)."""
    paths = {p for p, seen in after.items() if before.get(p) != seen} | (before.keys() - after)
    return [p[:1_000] for p in sorted(paths)[:FILES_TOLD]]


def carried(before: dict, after: dict) -> list[str]:
    """Paths a run added or changed that a report may carry, in path order."""
    found = []
    for path, (_, size) in sorted(after.items()):
        if before.get(path) == after[path] or size == 0 or size > limits.max_bytes():
            continue
        parts = PurePosixPath(path).parts
        if any(p.startswith(".") or p in NOT_CARRIED for p in parts):
            continue
        found.append(path)
    return found


def read_inside(root: str, path: str, limit: int) -> bytes | None:
    """The bytes of the regular file ``root/path``, or None: every folder on the way is
    opened without following a symlink, and so is the file; at most ``limit`` bytes."""
    parts = PurePosixPath(path).parts
    if not parts or any(p in ("", ".", "..") for p in parts):
        return None
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fds = []
    try:
        fds.append(os.open(root, flags | os.O_DIRECTORY))
        for folder in parts[:-1]:
            fds.append(os.open(folder, flags | os.O_DIRECTORY, dir_fd=fds[-1]))
        fd = os.open(parts[-1], flags | os.O_NONBLOCK, dir_fd=fds[-1])
        fds.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= limit else None
    except OSError:
        return None  # gone, a symlink, a folder or unreadable: not carried
    finally:
        for fd in reversed(fds):
            os.close(fd)


def upload_run_files(
    thread_id: str, bot_id: str, workspace, before: dict, after: dict
) -> list[AttachmentRef]:
    """Upload what the run wrote (see the module's rule); the refs its report carries."""
    thread = Thread.objects.get(pk=thread_id)
    refs: list[AttachmentRef] = []
    for path in carried(before, after):
        if len(refs) >= limits.max_per_message():
            break
        data = read_inside(str(workspace), path, limits.max_bytes())
        if data is None:
            continue
        try:
            row = store_upload(thread, bot_id, PurePosixPath(path).name, data)
        except sniff.Refused as refused:
            logger.info("a run's %s is not carried: %s", path, refused)
            continue
        refs.append(ref_of(row))
    return refs
