"""The fault suite: the scaled configuration as separate processes (``tests.peers.cluster``),
one piece killed or restarted mid-work, and counts that must stay zero.

Not part of the default ``pytest`` run (pyproject ignores ``tests/faults``); run it with
``make faults``. Every test records its figures as one line of JSON on the terminal and,
when ``ARBE_FAULTS_REPORT`` names a file, appended there (docs/reliability.md).
"""

import json
import os
from pathlib import Path

import pytest

from tests.peers import postgres

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in item.path.parents:  # the hook sees the whole session's items
            item.add_marker(pytest.mark.faults)
            item.add_marker(pytest.mark.timeout(600))


@pytest.fixture(autouse=True)
def _needs_services():
    import shutil

    if not postgres.available() or shutil.which("redis-server") is None:
        pytest.skip("PostgreSQL and redis-server are needed (make system-deps)")


@pytest.fixture
def report(request, capsys):
    """``report(**figures)``: one line of JSON named after the test, shown and kept."""

    def record(**figures) -> dict:
        line = {"fault": request.node.name, **figures}
        text = json.dumps(line, sort_keys=False)
        with capsys.disabled():
            print(f"\nfaults: {text}", flush=True)
        if path := os.environ.get("ARBE_FAULTS_REPORT"):
            with open(path, "a") as out:
                out.write(text + "\n")
        return line

    return record
