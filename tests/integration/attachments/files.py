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


def gif_photo(frames: int = 2) -> bytes:
    """An animated 40×20 GIF, looping, with what an editor leaves in one: an XMP packet with
    a GPS position ("XMP DataXMP" application extension, its magic trailer) and a comment."""
    images = [Image.new("RGB", (40, 20), (255, 0, 0)) for _ in range(frames)]
    for k, image in enumerate(images):
        image.paste((0, 0, 255), (k * 10, 0, k * 10 + 10, 10))
    out = io.BytesIO()
    images[0].save(
        out, "GIF", save_all=True, append_images=images[1:], loop=0, duration=100,
        comment=b"taken at home",
    )  # fmt: skip
    data = out.getvalue()
    xmp = (
        b"\x21\xff\x0bXMP DataXMP"
        + b'<?xpacket begin=""?>'
        + XMP.replace(b"<GPSLatitude>", b"<Make>Canon</Make><GPSLatitude>")
        + b'<?xpacket end="w"?>'
        + bytes([1] + list(range(255, -1, -1)) + [0])  # the magic trailer: sub-blocks end
    )
    # After the screen descriptor and its colour table: where editors put it.
    table = 3 * 2 ** ((data[10] & 7) + 1) if data[10] & 0x80 else 0
    at = 13 + table
    return data[:at] + xmp + data[at:]
