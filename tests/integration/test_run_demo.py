"""``make run`` (scripts/run_demo.py): the demo logins come after the server's start-up lines,
so they are the last thing a new user sees, and the server answers."""

import os
import subprocess
import sys
from pathlib import Path

import httpx

from tests.peers.ports import free_port, stop

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_logins_come_after_the_server_is_listening(tmp_path):
    env = {**os.environ, "ARBE_VAR_DIR": str(tmp_path / "var"), "DEBUG": "true"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.pop("DATABASE_URL", None)
    migrate = [sys.executable, "manage.py", "migrate", "--noinput"]
    subprocess.run(migrate, cwd=ROOT, env=env, check=True, capture_output=True)
    port = free_port()
    env["ARBE_INTERNAL_URL"] = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "scripts/run_demo.py", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    lines = []
    try:
        for raw in iter(proc.stdout.readline, b""):
            lines.append(raw.decode().rstrip())
            if "Shown once" in lines[-1]:
                break
        answer = httpx.get(f"http://127.0.0.1:{port}/login/", timeout=10)
    finally:
        stop(proc)
        proc.stdout.close()
    text = "\n".join(lines)
    assert answer.status_code == 200
    listening = next(i for i, line in enumerate(lines) if "Listening on TCP address" in line)
    box = next(i for i, line in enumerate(lines) if "Demo logins at" in line)
    assert lines[0] == "Demo house ready."
    assert listening < box, text
    assert "owner of Demo" in text and "member of Demo" in text
