"""Reading configuration from the environment, and the secrets kept in ``var/``.

``var/`` holds session keys (in the SQLite file) and signing secrets: it is made 0700 and
its files 0600, owner only, when created and again on every start (a file an older version
left 0644, or a copy with the umask's mode, is tightened). The processes that read them run
as one user; static files are served by the app itself, not a proxy reading ``var/``.
"""

import os
import secrets
import stat
from pathlib import Path

TRUE_WORDS = {"1", "true", "yes", "on"}

# Every variable the settings read, as they read it: the server's own configuration, which
# no bot may name as its key variable (dispatch/pi/keys.py).
READ: set[str] = set()


def env_str(name: str, default: str = "") -> str:
    READ.add(name)
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    READ.add(name)
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in TRUE_WORDS


def env_int(name: str, default: int) -> int:
    READ.add(name)
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    READ.add(name)
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return [part.strip() for part in value.split(",") if part.strip()]


PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def _tighten(path: Path, mode: int) -> None:
    """``path`` to ``mode`` if it exists and isn't already; a file this user doesn't own
    (an operator's copy) is left as it is rather than failing the start."""
    try:
        if path.stat().st_mode & 0o777 != mode:
            path.chmod(mode)
    except FileNotFoundError:
        pass
    except PermissionError:
        pass


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its owner may enter (0700), created if missing. A
    shared directory (sticky, as ``/tmp``) named by mistake is left alone."""
    path.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    if not path.stat().st_mode & stat.S_ISVTX:
        _tighten(path, PRIVATE_DIR)
    return path


def private_sqlite(name: str) -> None:
    """Create the SQLite file ``name`` 0600 before SQLite does (it would use the umask:
    0644), and tighten it and its ``-wal``/``-shm`` if they exist. SQLite creates the WAL
    and shared-memory files with the database file's own mode."""
    if not name or name == ":memory:" or name.startswith("file:"):
        return
    path = Path(name)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        pass
    except OSError:  # a directory that isn't there yet or isn't ours: SQLite will say
        return
    for suffix in ("", "-wal", "-shm", "-journal"):
        _tighten(Path(name + suffix), PRIVATE_FILE)


def stored_secret(path: Path, nbytes: int = 32) -> str:
    """Return the secret in ``path``, generating it (mode 0600) on first use.

    The value is never printed: it is read by the processes that need it and
    stays on this machine.
    """
    try:
        value = path.read_text().strip()
    except FileNotFoundError:
        pass
    else:
        _tighten(path, PRIVATE_FILE)
        return value
    private_dir(path.parent)
    value = secrets.token_urlsafe(nbytes)
    # O_EXCL: when two processes race, one writes and both read the winner.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return value
