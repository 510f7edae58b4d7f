"""JWTs for sandbox writers: one stream, one principal, a set of kinds, an expiry.

Minted by the server for a bot's reply or coding run and handed to its
process, which writes through ``/api/stream/<name>``. The signing key is
derived from ``SECRET_KEY`` and never leaves the server; the token itself
carries no secret.
"""

import hashlib
import hmac
import time

import jwt
import msgspec
from django.conf import settings

ALGORITHM = "HS256"
AUDIENCE = "arbe-stream-proxy"
DEFAULT_TTL_S = 3600


class SandboxClaims(msgspec.Struct, frozen=True):
    sub: str  # the principal (agent id) the token writes as
    stream: str
    kinds: tuple[str, ...]
    exp: int
    dispatch: str | None = None  # the reply it was minted for
    run: str | None = None  # the coding run it was minted for
    # The lease epoch its run holds its thread at: the proxy appends as the idempotent
    # producer ``sandbox:<run>`` at this epoch, so a takeover fences it at the store.
    epoch: int | None = None


class InvalidSandboxToken(Exception):
    """Expired, forged, or for another audience."""


def _key() -> bytes:
    return hmac.new(settings.SECRET_KEY.encode(), b"arbe.sandbox-jwt", hashlib.sha256).digest()


def mint(
    *,
    agent_id: str,
    stream: str,
    kinds: tuple[str, ...],
    ttl_s: int = DEFAULT_TTL_S,
    dispatch: str | None = None,
    run: str | None = None,
    epoch: int | None = None,
) -> str:
    claims = {
        "sub": agent_id,
        "stream": stream,
        "kinds": list(kinds),
        "exp": int(time.time()) + ttl_s,
        "aud": AUDIENCE,
    }
    if dispatch:
        claims["dispatch"] = dispatch
    if run:
        claims["run"] = run
    if epoch is not None:
        claims["epoch"] = epoch
    return jwt.encode(claims, _key(), algorithm=ALGORITHM)


def verify(token: str) -> SandboxClaims:
    try:
        claims = jwt.decode(
            token,
            _key(),
            algorithms=[ALGORITHM],
            audience=AUDIENCE,
            options={"require": ["exp", "sub", "aud"]},
        )
    except jwt.PyJWTError as exc:
        raise InvalidSandboxToken(str(exc)) from None
    claims.pop("aud", None)
    try:
        return msgspec.convert(claims, SandboxClaims)
    except msgspec.ValidationError as exc:
        raise InvalidSandboxToken(str(exc)) from None
