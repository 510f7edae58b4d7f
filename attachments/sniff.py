"""What a file is, from its bytes: never from its name or the client's Content-Type.

``sniff`` reads the leading bytes; an image is then opened by Pillow with a pixel cap
checked from its header before anything is decoded (a decompression bomb is refused
without being expanded), verified, and thumbnailed. All of it is synchronous work run
by a sync view, so Django runs it in a worker thread, never on the event loop.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from PIL import Image

from threads.attached import SAFE_IMAGES

THUMB_BOX = (640, 480)
HEAD = 1024

_MARKUP = re.compile(rb"<\s*(!doctype\s+html|html|head|body|script|iframe|svg|\?xml)", re.I)


class Refused(ValueError):
    """The file breaks a limit or is not what it claims; ``str()`` names the limit."""

    def __init__(self, text: str, status: int = 400):
        super().__init__(text)
        self.status = status


@dataclass(frozen=True)
class Sniffed:
    content_type: str
    width: int | None = None
    height: int | None = None
    thumbnail: bytes | None = None  # PNG or JPEG, for safe images


def sniff(head: bytes) -> str:
    """The content type the leading bytes show."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "application/zip"
    if head.startswith(b"\x1f\x8b"):
        return "application/gzip"
    if b"\x00" in head:
        return "application/octet-stream"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut at the end of the head is still text.
        if exc.start < len(head) - 4:
            return "application/octet-stream"
        text = head[: exc.start].decode("utf-8")
    markup = _MARKUP.search(text.encode()[:HEAD])
    if markup:
        tag = markup.group(1).lower()
        return (
            "image/svg+xml"
            if tag in (b"svg", b"?xml") and b"<svg" in head.lower()
            else ("text/html")
        )
    return "text/plain"


def inspect(data: bytes, *, max_pixels: int) -> Sniffed:
    """Sniff ``data``; for a safe image, check its size, verify it and make a thumbnail."""
    kind = sniff(data[:HEAD])
    if kind not in SAFE_IMAGES:
        return Sniffed(kind)
    label = kind.split("/")[1].upper()
    try:
        with Image.open(io.BytesIO(data)) as probe:  # reads the header only
            width, height = probe.size
            if width * height > max_pixels:
                raise Refused(
                    f"Images may be at most {max_pixels:,} pixels; this one is {width}×{height}.",
                    413,
                )
            probe.verify()
        with Image.open(io.BytesIO(data)) as image:
            image.draft("RGB", THUMB_BOX)  # JPEG: decode at a reduced scale
            image.thumbnail(THUMB_BOX)
            thumb = _encode_thumb(image)
    except Refused:
        raise
    except Image.DecompressionBombError:
        raise Refused(f"Images may be at most {max_pixels:,} pixels.", 413) from None
    except Exception:  # noqa: BLE001 - any decoder failure means "not a valid image"
        raise Refused(f"The file starts like a {label} image but is not a valid one.") from None
    return Sniffed(kind, width, height, thumb)


def _encode_thumb(image: Image.Image) -> bytes:
    out = io.BytesIO()
    if image.mode in ("RGBA", "LA", "P"):
        image.convert("RGBA").save(out, "PNG", optimize=True)
    else:
        image.convert("RGB").save(out, "JPEG", quality=82)
    return out.getvalue()


def thumb_type(thumb: bytes) -> str:
    return "image/png" if thumb.startswith(b"\x89PNG") else "image/jpeg"
