"""The environment a Pi process runs in: a scrubbed set of variables and, where bubblewrap
can create namespaces, a filesystem view that holds only what Pi needs.

The environment is built from nothing, never copied from ours: the Durable Streams secret,
``SECRET_KEY`` and the database and Redis URLs must never reach a bot (DESIGN.md §7).
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from django.conf import settings

from dispatch.pi.config import PI_CLI, PI_PACKAGE_DIR
from ops.context import pi_environment

logger = logging.getLogger(__name__)

BUBBLEWRAP = "bubblewrap"
NO_ISOLATION = "none"

# The agent dir's files Pi reads; anything else there stays outside the sandbox.
AGENT_FILES = ("models.json", "settings.json", "auth.json")
# Read-only system paths; a path that is a symlink (merged /usr) is recreated as one.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_BIN = ("/usr/local/bin", "/usr/bin", "/bin")
# Files under /etc that TLS, DNS and user lookups read, for providers reached over the network.
ETC_PATHS = (
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/localtime",
    "/etc/alternatives",
)


def node_binary() -> Path:
    node = shutil.which("node")
    if node is None:
        raise FileNotFoundError("node is not installed (Node 20 runs Pi)")
    return Path(node).resolve()


def pi_argv() -> list[str]:
    if not PI_CLI.is_file():
        raise FileNotFoundError(f"Pi is missing at {PI_CLI}: run `npm install` (make deps)")
    # The real path: bubblewrap binds node_modules by its real path, so a symlinked
    # node_modules (a git worktree sharing one) would hide the CLI inside the sandbox.
    return [str(node_binary()), str(PI_CLI.resolve())]


def scrubbed_env(home: Path, agent_dir: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """Pi's whole environment: the bot's own variables (``extra``, its key) and a fixed base
    that they cannot replace."""
    base = {
        "PATH": ":".join(dict.fromkeys([str(node_binary().parent), *SYSTEM_BIN])),
        "HOME": str(home),
        "LANG": os.environ.get("LANG") or "C.UTF-8",
        "PI_CODING_AGENT_DIR": str(agent_dir),
        "PI_OFFLINE": "1",
        "PI_TELEMETRY": "0",
        "PI_SKIP_VERSION_CHECK": "1",
        **pi_environment(),  # ARBE_REQUEST_ID: the request that caused this reply (ops)
    }
    return {**extra, **base}


def bubblewrap_argv(
    *, workspace: Path, writable: list[Path], config_dir: Path | None = None
) -> list[str]:
    """bwrap's arguments up to ``--``: system paths and node read-only, ``writable`` (the
    workspace, the session dir, the home) read-write, a private ``/tmp`` and PID space.

    ``config_dir`` (the bot's agent dir) becomes a private, empty directory holding its files
    bound read-only: Pi can't change them, yet can still create its lock directories
    (``settings.json.lock``) beside them, which live and die with the sandbox.

    The network namespace stays shared: models are reached over loopback (the demo model,
    the test fake) or over the network (a real provider).
    """
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    argv = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    for path in (*SYSTEM_PATHS, *ETC_PATHS):
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    node = node_binary()
    # Pi's dependencies are its siblings in node_modules: bind that directory, not the repo.
    readonly = [node, PI_PACKAGE_DIR.resolve().parents[1]]
    for path in readonly:
        argv += ["--ro-bind", str(path), str(path)]
    for path in writable:
        argv += ["--bind", str(path), str(path)]
    if config_dir is not None:
        argv += ["--tmpfs", str(config_dir)]
        for name in AGENT_FILES:
            if (config_dir / name).is_file():
                argv += ["--ro-bind", str(config_dir / name), str(config_dir / name)]
    argv += ["--chdir", str(workspace)]
    return argv + ["--"]


@functools.cache
def bubblewrap_works() -> bool:
    """Whether bwrap is installed and may create namespaces here; tried once per process."""
    if settings.PI_ISOLATION == NO_ISOLATION or shutil.which("bwrap") is None:
        return False
    probe = Path("/")
    argv = bubblewrap_argv(workspace=probe, writable=[]) + [str(node_binary()), "--version"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        logger.warning("bubblewrap trial failed, running Pi without it: %s", exc)
        return False
    if done.returncode != 0:
        logger.warning(
            "bubblewrap cannot run here, running Pi without it: %s",
            done.stderr.decode(errors="replace").strip(),
        )
        return False
    return True
