"""A few slots for decoding images, shared by every thread of the process.

Pillow decodes a PNG or WebP whole (only JPEG can be decoded at a reduced scale), so an
image within the pixel cap may still take width × height × 4 bytes while it is thumbnailed:
160 MB at the default cap. Four such uploads at once would take four times that. Each decode
takes a slot (``ARBE_IMAGE_DECODES``, one by default); the others wait their turn. After each
decode the freed memory is handed back to the system (glibc keeps it otherwise, and
the process would stay at its peak).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import threading

from django.conf import settings

_lock = threading.Lock()
_slots: threading.BoundedSemaphore | None = None
_size = 0


def _semaphore() -> threading.BoundedSemaphore:
    global _slots, _size
    with _lock:
        wanted = max(1, settings.ARBE_IMAGE_DECODES)
        if _slots is None or wanted != _size:
            _slots, _size = threading.BoundedSemaphore(wanted), wanted
        return _slots


@contextlib.contextmanager
def decoding():
    slots = _semaphore()
    with slots:
        try:
            yield
        finally:
            _trim()


def _libc():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


_LIBC = _libc()


def _trim() -> None:
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
