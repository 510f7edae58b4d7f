"""The trace client in a process of its own: what is queued is sent when the process exits,
and the backstop drops any property outside the allowlist."""

import os
import subprocess
import sys
from pathlib import Path

from tests.peers.posthog_capture import capture_server

SEND_AND_EXIT = """
import django; django.setup()
from datetime import UTC, datetime
from dispatch.traces import client
for n in range(3):
    props = {"$ai_trace_id": f"t{n}", "$ai_input": "promptsecret", "title": "x"}
    client.send("$ai_trace", "ag_bot", props, datetime.now(UTC))
client.send("$pageview", "ag_bot", {}, datetime.now(UTC))
"""


def test_queued_events_are_sent_at_exit_through_the_backstop():
    root = Path(__file__).resolve().parents[2]
    with capture_server() as server:
        env = dict(
            os.environ,
            DJANGO_SETTINGS_MODULE="arbe_site.settings",
            POSTHOG_API_KEY="phc_exit_test",
            POSTHOG_HOST=server.url,
        )
        subprocess.run([sys.executable, "-c", SEND_AND_EXIT], env=env, cwd=root, check=True)
        events = server.events
    assert sorted(e["properties"]["$ai_trace_id"] for e in events) == ["t0", "t1", "t2"]
    assert {e["event"] for e in events} == {"$ai_trace"}
    assert b"promptsecret" not in b"".join(server.decoded)
    assert all("title" not in e["properties"] for e in events)
