"""What a file is, from its bytes: never from its name or the client's Content-Type.

``sniff`` reads the leading bytes; an image is then opened by Pillow with a pixel cap
checked from its header before anything is decoded (a decompression bomb is refused
without being expanded), verified, thumbnailed, and its metadata removed
(``attachments.metadata``). Decoding takes one of a few slots (``attachments.decoding``), so
many large images at once wait rather than fill memory. All of it is synchronous work run
by a sync view, so Django runs it in a worker thread, never on the event loop.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from PIL import Image, ImageOps

from attachments import metadata
from attachments.decoding import decoding
from threads.attached import SAFE_IMAGES

THUMB_BOX = (640, 480)
ORIENTATION = 0x0112  # the EXIF tag
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
    kept: bytes | None = None  # a safe image's bytes to store: upright, without metadata


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
    """Sniff ``data``; for a safe image, check its size, verify it, make a thumbnail and the
    bytes to keep: turned upright if its EXIF says so, without its metadata."""
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
        with decoding(), Image.open(io.BytesIO(data)) as image:
            if _turned(image, kind):
                upright = ImageOps.exif_transpose(image)  # decodes it whole: under the cap
                # Pillow's encoders fall back to ``info`` (comment, EXIF): only colour stays.
                upright.info = {k: v for k, v in upright.info.items() if k == "icc_profile"}
                kept = metadata.strip(_encode_like(upright, kind), kind)
            else:
                upright, kept = image, metadata.strip(data, kind)
            width, height = upright.size
            upright.draft("RGB", THUMB_BOX)  # JPEG: decode at a reduced scale
            upright.thumbnail(THUMB_BOX)
            thumb = _encode_thumb(upright)
    except Refused:
        raise
    except Image.DecompressionBombError:
        raise Refused(f"Images may be at most {max_pixels:,} pixels.", 413) from None
    except Exception:  # noqa: BLE001 - any decoder failure means "not a valid image"
        raise Refused(f"The file starts like a {label} image but is not a valid one.") from None
    return Sniffed(kind, width, height, thumb, kept)


def _turned(image: Image.Image, kind: str) -> bool:
    """Whether the EXIF asks for the image to be turned (a still image only: an animation
    is kept as it is, its tag dropped with the rest; a GIF has no EXIF)."""
    if kind == "image/gif" or image.getexif().get(ORIENTATION, 1) not in range(2, 9):
        return False
    return getattr(image, "n_frames", 1) == 1


def _encode_like(image: Image.Image, kind: str) -> bytes:
    out = io.BytesIO()
    if kind == "image/jpeg":
        icc = image.info.get("icc_profile")
        image.save(out, "JPEG", quality=92, **({"icc_profile": icc} if icc else {}))
    elif kind == "image/webp":
        image.save(out, "WEBP", quality=90)
    else:
        image.save(out, "PNG")
    return out.getvalue()


def _encode_thumb(image: Image.Image) -> bytes:
    out = io.BytesIO()
    if image.mode in ("RGBA", "LA", "P"):
        image.convert("RGBA").save(out, "PNG", optimize=True)
    else:
        image.convert("RGB").save(out, "JPEG", quality=82)
    return out.getvalue()


def thumb_type(thumb: bytes) -> str:
    return "image/png" if thumb.startswith(b"\x89PNG") else "image/jpeg"
