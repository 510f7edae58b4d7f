"""Short random identifiers for records whose id travels in URLs and entries."""

import secrets
import time

# Lower-case letters and digits without look-alikes (0/o, 1/l): safe in URLs,
# stream names and mention-free text.
ALPHABET = "23456789abcdefghijkmnpqrstuvwxyz"


def random_id(length: int = 12, prefix: str = "") -> str:
    return prefix + "".join(secrets.choice(ALPHABET) for _ in range(length))


def time_ordered_id(prefix: str = "") -> str:
    """A 24-char id that sorts by creation time (ms) and then by randomness."""
    return f"{prefix}{time.time_ns() // 1_000_000:012x}{secrets.token_hex(6)}"
