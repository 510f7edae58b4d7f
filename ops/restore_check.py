"""Is a restored copy the same as what it was taken from? Counts on both sides.

Compares, between this instance (its settings) and another (a database URL, a stream
server URL, an attachments directory): people, houses, bots, threads, attachment rows and
files, and for every thread its stream's entry count and last entry id. Entry ids are
arbe's own; offsets are never compared (they are opaque, and a restore onto another kind
of stream server may number them differently). Used by ``manage.py check_restore`` and
scripts/backup_restore.py (docs/operations.md, "Verifying a backup").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

OTHER = "restore_check_other"


@dataclass
class Counts:
    tables: dict[str, int] = field(default_factory=dict)
    streams: dict[str, tuple[int, str]] = field(default_factory=dict)  # name → (count, last id)
    files: int | None = None  # attachment files on a filesystem store; None: not counted

    def summary(self) -> str:
        entries = sum(count for count, _ in self.streams.values())
        parts = [f"{n} {name}" for name, n in self.tables.items()]
        parts.append(f"{len(self.streams)} streams with {entries} entries")
        if self.files is not None:
            parts.append(f"{self.files} attachment files")
        return ", ".join(parts)


def add_database(url: str) -> str:
    """Make ``url`` a database alias of this process; returns the alias."""
    import dj_database_url
    from django.db import connections

    configured = {**connections.settings, OTHER: dj_database_url.parse(url, conn_max_age=0)}
    connections.settings[OTHER] = connections.configure_settings(configured)[OTHER]
    return OTHER


def count(alias: str, reader, attachments_dir: Path | None) -> Counts:
    """Counts in the database ``alias`` and, for its threads, the logs ``reader`` reads."""
    from django.contrib.auth import get_user_model

    from attachments.models import Attachment
    from houses.models import Agent, House
    from streams.errors import StreamNotFound
    from threads.models import Thread, stream_name_for

    counts = Counts()
    counts.tables = {
        "people": get_user_model().objects.using(alias).count(),
        "houses": House.objects.using(alias).count(),
        "bots": Agent.objects.using(alias).filter(kind=Agent.Kind.BOT).count(),
        "threads": Thread.objects.using(alias).count(),
        "attachments": Attachment.objects.using(alias).count(),
    }
    for thread_id in Thread.objects.using(alias).order_by("pk").values_list("pk", flat=True):
        name = stream_name_for(thread_id)
        try:
            messages = reader.catch_up(name).messages or ()
        except StreamNotFound:
            counts.streams[name] = (-1, "")  # a thread whose log is missing
            continue
        last = json.loads(messages[-1]).get("id", "") if messages else ""
        counts.streams[name] = (len(messages), last)
    if attachments_dir is not None:
        counts.files = sum(1 for p in attachments_dir.rglob("*") if p.is_file())
    return counts


def differences(here: Counts, there: Counts) -> list[str]:
    found = [
        f"{name}: {here.tables.get(name)} here, {there.tables.get(name)} in the copy"
        for name in here.tables
        if here.tables.get(name) != there.tables.get(name)
    ]
    for name in sorted(set(here.streams) | set(there.streams)):
        mine, theirs = here.streams.get(name), there.streams.get(name)
        if mine != theirs:
            found.append(f"{name}: {_entries(mine)} here, {_entries(theirs)} in the copy")
    if here.files is not None and there.files is not None and here.files != there.files:
        found.append(f"attachment files: {here.files} here, {there.files} in the copy")
    return found


def _entries(value: tuple[int, str] | None) -> str:
    if value is None:
        return "no thread"
    if value[0] < 0:
        return "no stream"
    return f"{value[0]} entries (last {value[1] or '-'})"
