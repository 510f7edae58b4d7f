"""A read-only T3 Code client: the board normalizer and the Effect RPC transport."""

from boards.t3.board import apply, normalize
from boards.t3.rows import FIELDS, META, Row

__all__ = ["FIELDS", "META", "Row", "apply", "normalize"]
