"""Projections of a thread's entries for people and bots.

Raw reads keep every entry; these views apply the log's two reading rules:
the first entry of an id wins, and a tombstone (``signal.entry.deleted``)
removes the chat it names. A tombstone only ever hides chat — it never
undoes what a reply already did with the message.
"""

from collections.abc import Iterable

import msgspec

from threads.entries import Chat, Entry, EntryDeleted, FilesPurged, first_of_each_id


def tombstoned_ids(entries: Iterable[Entry]) -> set[str]:
    return {e.payload.entryId for e in entries if isinstance(e.payload, EntryDeleted)}


def chat_projection(entries: Iterable[Entry]) -> list[Entry]:
    """The chat people see: each id once, tombstoned chat gone."""
    entries = first_of_each_id(list(entries))
    gone = tombstoned_ids(entries)
    return [e for e in entries if isinstance(e.payload, Chat) and e.id not in gone]


def visible_entries(entries: Iterable[Entry]) -> list[Entry]:
    """Everything a thread page renders: tombstoned chat and legacy typing text removed."""
    entries = first_of_each_id(list(entries))
    gone = tombstoned_ids(entries)
    shown = [
        e for e in entries if e.payload.shown and not (isinstance(e.payload, Chat) and e.id in gone)
    ]
    purged = {e.payload.entryId for e in entries if isinstance(e.payload, FilesPurged)}
    return [without_files(e) if e.id in purged else e for e in shown] if purged else shown


def without_files(entry: Entry) -> Entry:
    """A chat whose files an owner purged, as pages show it: the files' place says so."""
    p = entry.payload
    if not isinstance(p, Chat) or not p.attachments:
        return entry
    text = p.text or "*Files removed.*"
    return msgspec.structs.replace(
        entry, payload=msgspec.structs.replace(p, text=text, attachments=[])
    )


def dispatch_history(entries: Iterable[Entry]) -> list[Entry]:
    """The conversation handed to a bot on its next turn: the chat projection."""
    return chat_projection(entries)
