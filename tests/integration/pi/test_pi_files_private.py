"""Pi's transcripts and workspaces are the server user's only, wherever ``PI_HOME`` is: a
``PI_HOME`` outside ``var/``, under a permissive umask, holds 0700 directories and 0600
files after a real Pi wrote its session and ran a tool that made a file."""

import os
import stat
from pathlib import Path

import pytest

from dispatch.pi import layout
from dispatch.pi.process import PiSession
from tests.integration.pi.conftest import run_to_end
from tests.peers.fake_llm import bash


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def permissive_umask():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


async def test_a_pi_home_outside_var_is_private(
    tmp_path, settings, pi_config, fake_llm, permissive_umask
):
    home = tmp_path / "elsewhere" / "pi"
    home.mkdir(parents=True, mode=0o755)
    settings.PI_HOME = home
    # An older install left part of the tree and a transcript world-readable.
    old = layout.session_file(7, "t1", "bot1", "g1")
    old.parent.mkdir(parents=True)
    old.parent.chmod(0o755)
    old.write_text("")
    old.chmod(0o644)

    config = pi_config(session_file=old, workspace=layout.workspace("bot1", "t1"))
    fake_llm.script(bash("echo secret > notes.txt"))
    session = await PiSession.start(config)
    try:
        events = session.events()
        await session.prompt("write it down")
        await run_to_end(session, events)
    finally:
        await session.close()

    written = config.workspace / "notes.txt"
    assert written.read_text() == "secret\n"
    assert mode(written) == 0o600
    assert old.stat().st_size > 0 and mode(old) == 0o600
    for path in (old.parent, config.workspace, home, home / "sessions", home / "workspaces"):
        while path != home.parent:
            assert mode(path) == 0o700, path
            path = path.parent
    for path in (home / "sessions").rglob("*"):
        assert mode(path) == (0o700 if path.is_dir() else 0o600), path
