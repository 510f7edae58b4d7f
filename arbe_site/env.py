"""Reading configuration from the environment, and the secrets kept in ``var/``."""

import os
import secrets
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


def stored_secret(path: Path, nbytes: int = 32) -> str:
    """Return the secret in ``path``, generating it (mode 0600) on first use.

    The value is never printed: it is read by the processes that need it and
    stays on this machine.
    """
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(nbytes)
    # O_EXCL: when two processes race, one writes and both read the winner.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(value)
    return value
