"""How fast invite links can be guessed, without locking out the people they were sent to.

Misses (a token that is no live invite's) are counted per client address and per token
prefix (the first ``PREFIX_CHARS`` characters of the token tried), in the "limits" cache,
which every process shares (Redis when scaled, a database table otherwise).

- An address over ``MISSES_PER_ADDRESS`` in a window has its tokens looked up only when
  their prefix is a live invite's (``HouseInvite.token_prefix``): a guess almost never
  is (1 in 64⁴ per live invite), so its guesses go no further, while a real invitee
  behind the same proxy or NAT, whose link has a live prefix, still gets in.
- A prefix over ``MISSES_PER_PREFIX`` is answered without looking at all: someone who
  knows the start of a link (a screenshot, a truncated log line) and tries the rest
  from many addresses.
Every refusal is the same 404 as an unknown token.
"""

import hashlib

from django.core.cache import caches

PREFIX_CHARS = 4
MISSES_PER_ADDRESS = 20
MISSES_PER_PREFIX = 20
WINDOW_S = 600


def limits():
    return caches["limits"]


def prefix_of(token: str) -> str:
    return token[:PREFIX_CHARS]


def _key(kind: str, value: str) -> str:
    # Hashed: an address or a token from a URL can hold characters no cache key may.
    return f"invite-misses:{kind}:{hashlib.blake2b(value.encode(), digest_size=16).hexdigest()}"


def over_limits(address: str, token: str) -> tuple[bool, bool]:
    """Whether ``address`` and ``token``'s prefix have missed too often in this window."""
    keys = _key("address", address), _key("prefix", prefix_of(token))
    counts = limits().get_many(keys)
    return (
        counts.get(keys[0], 0) >= MISSES_PER_ADDRESS,
        counts.get(keys[1], 0) >= MISSES_PER_PREFIX,
    )


def count_miss(address: str, token: str) -> None:
    cache = limits()
    for key in (_key("address", address), _key("prefix", prefix_of(token))):
        cache.add(key, 0, WINDOW_S)  # the window starts at the first miss
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr: a new window
            cache.set(key, 1, WINDOW_S)
