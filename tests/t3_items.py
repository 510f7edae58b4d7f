"""Builders for T3 shell-stream items, shared by the normalizer and board service tests."""


def shell_thread(thread_id="t1", **fields):
    return {
        "id": thread_id,
        "title": "Example",
        "status": "idle",
        "latestVisibleMessage": None,
    } | fields


def shell_snapshot(*threads, archived=(), sequence=123):
    return {
        "kind": "snapshot",
        "snapshot": {
            "schemaVersion": 2,
            "snapshotSequence": sequence,
            "projects": [],
            "threads": list(threads),
            "archivedThreads": list(archived),
        },
    }


def enrichment(roots=("/redacted",), sequence=123):
    """The project-only snapshot T3 sends second: marked, and never an empty board."""
    return {"resolvedRepositoryIdentityRoots": list(roots)} | shell_snapshot(sequence=sequence)
