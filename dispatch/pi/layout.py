"""Where a bot's files live under ``PI_HOME``, and the agent dir each bot is given.

Each of these is the most a Pi process may see of the server's disk (bubblewrap binds only
them, see ``sandbox.py``):

- ``bots/<bot>/agent/``: the bot's own copy of the provider config, generated before each
  reply from the server's agent dir (the operator's ``PI_AGENT_DIR``, or the managed one
  serving the demo model): ``models.json`` with the bot's provider only, ``settings.json``,
  and ``auth.json`` only if the server's holds an entry for that provider. Read-only.
- ``bots/<bot>/home/``: its ``HOME``.
- ``sessions/<house>/<thread>/<bot>/``: its Pi session files for one thread.
- ``workspaces/<bot>/<thread>/``: its working directory in one thread.

The server's agent dir itself, other bots' and houses' files, ``var/`` and the repository
are never given to a bot.

Session transcripts hold whole conversations, so everything here is the server user's
only, wherever ``PI_HOME`` is (not only when ``var/`` protects it): directories 0700 from
``PI_HOME`` down (``private_dirs``), and Pi runs with umask 077 so what it writes is 0600.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from django.conf import settings

from arbe_lib.env import PRIVATE_FILE, private_dir
from dispatch.pi.config import pi_settings, write_agent_dir, write_json
from dispatch.pi.providers import agent_dir_providers, key_plan


def private_dirs(*paths: Path) -> None:
    """Create ``paths`` and make each of them, and every directory between it and
    ``PI_HOME`` (and ``PI_HOME`` itself), 0700: a tree an older install made 0755 is
    tightened too. A path outside ``PI_HOME`` (a scratch dir) gets only itself made 0700."""
    home = Path(settings.PI_HOME).absolute()
    for path in paths:
        path = private_dir(Path(path).absolute())
        for parent in path.parents:
            if parent != home and home not in parent.parents:
                break
            private_dir(parent)


def private_file(path: Path) -> None:
    """A transcript an older Pi wrote 0644: 0600 before it is appended to again."""
    with contextlib.suppress(FileNotFoundError, PermissionError):
        if path.stat().st_mode & 0o777 != PRIVATE_FILE:
            path.chmod(PRIVATE_FILE)


def bot_dir(bot_id: str) -> Path:
    return Path(settings.PI_HOME) / "bots" / bot_id


def session_file(house_id: int | str, thread_id: str, bot_id: str, name: str) -> Path:
    """One Pi session of ``bot_id`` in a thread (``name``: its generation, or ``run``)."""
    house = str(house_id)
    return Path(settings.PI_HOME) / "sessions" / house / thread_id / bot_id / f"{name}.jsonl"


def workspace(bot_id: str, thread_id: str) -> Path:
    return Path(settings.PI_HOME) / "workspaces" / bot_id / thread_id


def bot_agent_dir(bot, source: Path) -> Path:
    """Write ``bot``'s own agent dir from the server's (``source``) and return it.

    The bot's provider entry is copied as it is, except that its ``apiKey`` names the
    variable Pi reads the bot's key from (``key_plan``), so a key given by ``api_key_env``
    is the one used. Every file is replaced atomically: a Pi of the same bot starting
    meanwhile reads the old file or the new one.
    """
    path = bot_dir(bot.id) / "agent"
    private_dirs(path)
    providers: dict[str, dict] = {}
    entry = agent_dir_providers(source).get(bot.provider) if bot.provider else None
    if isinstance(entry, dict):
        _, target = key_plan(bot.provider, bot.api_key_env, source)
        providers[bot.provider] = {**entry, "apiKey": target} if target else entry
    write_agent_dir(path, providers)
    write_json(path / "settings.json", _read(source / "settings.json") or pi_settings())
    auth = _read(source / "auth.json")
    if isinstance(auth, dict) and bot.provider in auth:
        write_json(path / "auth.json", {bot.provider: auth[bot.provider]})
    else:
        with contextlib.suppress(FileNotFoundError):
            (path / "auth.json").unlink()
    return path


def _read(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
