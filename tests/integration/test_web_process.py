"""The web process (``python -m arbe_site.web``): Daphne's command line, on uvloop."""

import asyncio
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.peers.ports import free_port, stop, wait_for_port

ROOT = Path(__file__).resolve().parents[2]


async def app(scope, receive, send):
    """What the process under test serves: the class of the loop it runs on."""
    loop = type(asyncio.get_running_loop())
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send(
        {"type": "http.response.body", "body": f"{loop.__module__}.{loop.__name__}".encode()}
    )


@pytest.mark.parametrize(
    ("command", "loop"),
    [
        ([sys.executable, "-m", "arbe_site.web"], "uvloop.Loop"),
        (
            [str(Path(sys.executable).with_name("daphne"))],
            "asyncio.unix_events._UnixSelectorEventLoop",
        ),
    ],
    ids=["arbe_site.web", "bare daphne"],
)
def test_the_web_process_runs_daphne_on_uvloop(tmp_path, command, loop):
    port = free_port()
    with (tmp_path / "daphne.log").open("wb") as log:
        proc = subprocess.Popen(
            [*command, "-b", "127.0.0.1", "-p", str(port), f"{__name__}:app"],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_port(port, proc=proc)
        answer = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
    finally:
        stop(proc)
    assert answer.text == loop, (tmp_path / "daphne.log").read_text()[-2000:]
