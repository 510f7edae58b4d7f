"""Projections of a thread's entries for people and bots.

Raw reads keep every entry; these views apply the log's reading rules:
the first entry of an id wins, a tombstone (``signal.entry.deleted``)
removes the chat it names, and an edit (``signal.entry.edited``) by the chat's
own author replaces its text (the latest edit in log order wins; the chat then
reads as ``EditedChat``). A tombstone only ever hides chat and an edit only ever
changes what it says — neither undoes what a reply already did with the message.
"""

from collections.abc import Iterable, Mapping

import msgspec

from threads.entries import (
    Chat,
    EditedChat,
    Entry,
    EntryDeleted,
    EntryEdited,
    FilesPurged,
    first_of_each_id,
)


def tombstoned_ids(entries: Iterable[Entry]) -> set[str]:
    return {e.payload.entryId for e in entries if isinstance(e.payload, EntryDeleted)}


def latest_texts(entries: Iterable[Entry]) -> dict[str, str]:
    """Chat id -> its latest text, for chat edited among ``entries``. An edit counts only
    after its chat and only by the chat's author (the API allows no other)."""
    authors: dict[str, str | None] = {}
    texts: dict[str, str] = {}
    for e in entries:
        p = e.payload
        if isinstance(p, Chat):
            authors.setdefault(e.id, e.authorId)
        elif isinstance(p, EntryEdited) and authors.get(p.entryId, "-") == e.authorId:
            texts[p.entryId] = p.text
    return texts


def with_texts(entries: Iterable[Entry], texts: Mapping[str, str]) -> list[Entry]:
    """``entries`` with the chat named in ``texts`` saying its latest text (its files stay)."""
    if not texts:
        return list(entries)
    return [
        msgspec.structs.replace(
            e, payload=EditedChat(text=texts[e.id], attachments=e.payload.attachments)
        )
        if e.id in texts and isinstance(e.payload, Chat)
        else e
        for e in entries
    ]


def without_files(entry: Entry) -> Entry:
    """A chat whose files an owner purged, as pages show it: the files' place says so."""
    p = entry.payload
    if not isinstance(p, Chat) or not p.attachments:
        return entry
    text = p.text or "*Files removed.*"
    return msgspec.structs.replace(
        entry, payload=msgspec.structs.replace(p, text=text, attachments=[])
    )


def chat_projection(entries: Iterable[Entry]) -> list[Entry]:
    """The chat people see: each id once, tombstoned chat gone, edited chat at its latest."""
    entries = first_of_each_id(list(entries))
    gone = tombstoned_ids(entries)
    chat = [e for e in entries if isinstance(e.payload, Chat) and e.id not in gone]
    return with_texts(chat, latest_texts(entries))


def visible_entries(
    entries: Iterable[Entry], later_texts: Mapping[str, str] | None = None
) -> list[Entry]:
    """Everything a thread page renders: tombstoned chat and legacy typing text removed,
    edited chat at its latest text (``later_texts``: edits past a history window)."""
    entries = first_of_each_id(list(entries))
    gone = tombstoned_ids(entries)
    texts = latest_texts(entries) | dict(later_texts or {})
    shown = [
        e
        for e in entries
        if e.payload.shown
        and not isinstance(e.payload, EntryEdited)
        and not (isinstance(e.payload, Chat) and e.id in gone)
    ]
    shown = with_texts(shown, texts)
    purged = {e.payload.entryId for e in entries if isinstance(e.payload, FilesPurged)}
    return [without_files(e) if e.id in purged else e for e in shown] if purged else shown


def dispatch_history(entries: Iterable[Entry]) -> list[Entry]:
    """The conversation handed to a bot on its next turn: the chat projection."""
    return chat_projection(entries)
