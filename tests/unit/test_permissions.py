"""The who-may-write-what table, cell by cell."""

import pytest

from threads import entries as E
from threads.permissions import BOT_KINDS, Writer, WriteRefused, WriterKind, check_write

PERSON = Writer(WriterKind.PERSON, "ag_p")
BOT = Writer(WriterKind.BOT, "ag_b", kinds=BOT_KINDS, dispatch="d1", run="r1")
NARROW_BOT = Writer(WriterKind.BOT, "ag_b", kinds=frozenset({"chat"}), dispatch="d1")
SERVICE = Writer(WriterKind.SERVICE, None)


def entry(payload, author):
    return E.Entry(id="e", ts=1, payload=payload, authorId=author)


CHAT = E.Chat(text="hi")
CASES = [
    # writer, payload, author, allowed
    (PERSON, CHAT, "ag_p", True),
    (PERSON, CHAT, "ag_other", False),
    (PERSON, CHAT, None, False),
    (PERSON, E.EntryDeleted(entryId="x"), "ag_p", False),
    (PERSON, E.PiAssistant(message={}), "ag_p", False),
    (PERSON, E.DispatchStarted(dispatchId="d1", agentId="ag_p", entryIds=[]), "ag_p", False),
    (BOT, CHAT, "ag_b", True),
    (BOT, CHAT, "ag_p", False),
    (BOT, E.PiAssistant(message={}, dispatchId="d1"), "ag_b", True),
    (BOT, E.PiAssistant(message={}, dispatchId="d2"), "ag_b", False),
    (BOT, E.PiToolResult(message={}, dispatchId="d1"), "ag_b", True),
    (BOT, E.DispatchStarted(dispatchId="d1", agentId="ag_b", entryIds=["e"]), "ag_b", True),
    (BOT, E.DispatchStarted(dispatchId="d1", agentId="ag_x", entryIds=["e"]), "ag_b", False),
    (BOT, E.DispatchPhase(dispatchId="d1", phase="tool"), "ag_b", True),
    (BOT, E.DispatchFinished(dispatchId="d2"), "ag_b", False),
    (BOT, E.DispatchFailed(stage="model", error="x", dispatchId="d1"), "ag_b", True),
    (BOT, E.ThreadRunState(runId="r1", state="running"), "ag_b", True),
    (BOT, E.ThreadRunState(runId="r2", state="running"), "ag_b", False),
    (BOT, E.ThreadPiFailed(error="x", runId="r1"), "ag_b", True),
    (BOT, E.FilesChanged(paths=["a"], runId="r1"), "ag_b", True),
    (BOT, E.EnvironmentPrepared(agentId="ag_b", isolation="none"), "ag_b", True),
    (BOT, E.EnvironmentPrepared(agentId="ag_x", isolation="none"), "ag_b", False),
    (BOT, E.EntryDeleted(entryId="x"), "ag_b", False),
    (BOT, E.ThreadCreated(title="t"), "ag_b", False),
    (BOT, E.DirectorDecided(picked=[], upTo="e"), "ag_b", False),
    (BOT, E.ThreadChildFinished(childThreadId="c", report="r"), "ag_b", False),
    (NARROW_BOT, CHAT, "ag_b", True),
    (NARROW_BOT, E.PiAssistant(message={}, dispatchId="d1"), "ag_b", False),
    (SERVICE, E.EntryDeleted(entryId="x"), "ag_p", True),
    (SERVICE, E.DirectorDecided(picked=["ag_b"], upTo="e"), None, True),
]


@pytest.mark.parametrize(("writer", "payload", "author", "allowed"), CASES)
def test_who_may_write_what(writer, payload, author, allowed):
    if allowed:
        check_write(writer, entry(payload, author))
    else:
        with pytest.raises(WriteRefused):
            check_write(writer, entry(payload, author))
