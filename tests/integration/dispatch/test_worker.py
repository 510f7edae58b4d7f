"""The scaled configuration: wakes cross processes to a `manage.py backstage` worker."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from tests.peers.ports import stop

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [
    pytest.mark.backstage,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis between processes"),
]


def database_url_of_the_test_db() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def test_a_backstage_worker_answers_wakes_sent_over_the_channel_layer(live, settings):
    settings.BACKSTAGE = "worker"
    env = {
        **os.environ,
        "DATABASE_URL": database_url_of_the_test_db(),
        "BACKSTAGE": "worker",
        "PI_HOME": str(settings.PI_HOME),
        "PI_AGENT_DIR": settings.PI_AGENT_DIR,
        "SECRET_KEY": settings.SECRET_KEY,
    }
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "backstage", "--interval", "3600"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert "listening" in worker.stdout.readline()
        live.post("@helper hello from the web process")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and live.types()[-1] != "signal.thread_director.outcome":
            time.sleep(0.1)
        assert live.types()[-3:] == [
            "chat",
            "signal.dispatch.finished",
            "signal.thread_director.outcome",
        ]
    finally:
        stop(worker)
