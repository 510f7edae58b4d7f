"""The VAPID key pair: generated on first use and kept in ``var/`` (0600), as the other
secrets (``arbe_lib.env``). Browsers get the public half to subscribe with."""

from __future__ import annotations

import base64
import functools
import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from django.conf import settings
from py_vapid import Vapid

from arbe_lib.env import PRIVATE_FILE, _tighten, private_dir


def _load_or_make(path: Path) -> Vapid:
    try:
        pem = path.read_bytes()
    except FileNotFoundError:
        private_dir(path.parent)
        made = Vapid()
        made.generate_keys()
        try:  # O_EXCL: when two processes race, one writes and both read the winner
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        except FileExistsError:
            pem = path.read_bytes()
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(made.private_pem())
            return made
    _tighten(path, PRIVATE_FILE)
    return Vapid.from_pem(pem)


@functools.cache
def vapid() -> Vapid:
    return _load_or_make(Path(settings.VAPID_KEY_FILE))


def public_key() -> str:
    """The application server key, as ``pushManager.subscribe`` wants it (base64url)."""
    raw = vapid().public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
