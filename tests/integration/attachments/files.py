"""Files for attachment tests, made here: real images, a crafted bomb, markup in disguise."""

import io
import struct
import zlib

from PIL import Image


def png(w: int = 64, h: int = 48, color=(200, 60, 40)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), color).save(out, "PNG")
    return out.getvalue()


def jpeg(w: int = 1600, h: int = 1200) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), (40, 90, 200)).save(out, "JPEG")
    return out.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bomb(side: int = 60_000) -> bytes:
    """A valid PNG header for a ``side``×``side`` grey image whose data is a few hundred
    bytes of zlib (decoded, it would be 3.6 GB)."""
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00" * (side + 1) * 64, 9)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")
    )


HTML = b"<!doctype html><html><body><script>alert(document.cookie)</script></body></html>"
SVG = (
    b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
    b"<script>alert(1)</script></svg>"
)
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


XMP = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><GPSLatitude>48,51.29N</GPSLatitude></x:xmpmeta>'


def _camera_exif(orientation: int):
    exif = Image.Exif()
    exif[0x010F] = "Canon"  # Make
    exif[0x0110] = "EOS 5D"  # Model
    exif[0x0112] = orientation
    gps = exif.get_ifd(0x8825)
    gps.update({1: "N", 2: (48.0, 51.0, 29.0), 3: "E", 4: (2.0, 17.0, 40.0)})
    return exif


def photo(fmt: str = "JPEG", orientation: int = 1) -> bytes:
    """A 40×20 picture, red with a blue top-left corner, as a camera writes it: EXIF with
    a GPS position, make and model, XMP, and (JPEG, PNG) a comment."""
    from PIL import PngImagePlugin

    image = Image.new("RGB", (40, 20), (255, 0, 0))
    image.paste((0, 0, 255), (0, 0, 10, 10))
    out = io.BytesIO()
    extra: dict = {"exif": _camera_exif(orientation).tobytes()}
    if fmt == "JPEG":
        extra |= {"comment": b"taken at home", "xmp": XMP, "quality": 95}
    elif fmt == "PNG":
        info = PngImagePlugin.PngInfo()
        info.add_text("Comment", "taken at home")
        info.add_itxt("XML:com.adobe.xmp", XMP.decode())
        extra["pnginfo"] = info
    else:
        extra |= {"xmp": XMP, "lossless": True}
    image.save(out, fmt, **extra)
    return out.getvalue()
