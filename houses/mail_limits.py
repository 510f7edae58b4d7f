"""How often mail may be asked for: a fixed window per key in the shared "limits" cache.

Sign-in has django-axes; asking for mail is another way to make the server send to an
address someone typed, so it is counted too: password resets per client address and per
address asked for, confirmation links per person. Every request counts, whether or not an
account has that address, so the limit itself tells nobody which addresses are known.
"""

import hashlib

from django.core.cache import caches

HOUR_S = 3600


def _key(kind: str, value: str) -> str:
    # Hashed: an address typed into a form can hold characters no cache key may.
    digest = hashlib.blake2b(value.strip().lower().encode(), digest_size=16).hexdigest()
    return f"mail-asks:{kind}:{digest}"


def take(kind: str, value: str, limit: int, window_s: int = HOUR_S) -> bool:
    """Count one more request for ``(kind, value)``; False when it is over ``limit``."""
    cache, key = caches["limits"], _key(kind, value)
    cache.add(key, 0, window_s)  # the window starts at the first request
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr: a new window
        cache.set(key, 1, window_s)
        count = 1
    return count <= limit
