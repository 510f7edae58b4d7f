"""Image metadata removed from the bytes we keep: a photo's EXIF (GPS position, camera make
and serial, time), XMP, IPTC and comments would tell everyone in the house where and with
what it was taken.

The pixels are left as they are: the container is rewritten without its metadata blocks
(JPEG segments, PNG chunks, WebP RIFF chunks, GIF extensions), so nothing is decoded or
re-compressed. What is kept is only what drawing needs: a JPEG's JFIF, ICC profile and
Adobe colour marker, a PNG's colour, transparency, density and animation chunks, a WebP's
image and animation chunks, a GIF's frames, their timing, its loop and colour profile. A
photo whose EXIF says "rotate" is turned by ``sniff`` first and re-encoded, since dropping
the tag would show it on its side.
"""

from __future__ import annotations

import struct


class Malformed(ValueError):
    """The container's structure doesn't hold together."""


def strip(data: bytes, content_type: str) -> bytes:
    if content_type == "image/jpeg":
        return strip_jpeg(data)
    if content_type == "image/png":
        return strip_png(data)
    if content_type == "image/webp":
        return strip_webp(data)
    if content_type == "image/gif":
        return strip_gif(data)
    return data


# APPn segments a decoder needs, by marker and leading bytes; every other APPn and COM goes.
_KEEP_APP = {0xE0: (b"JFIF\x00", b"JFXX\x00"), 0xE2: (b"ICC_PROFILE\x00",), 0xEE: (b"Adobe",)}


def strip_jpeg(data: bytes) -> bytes:
    if not data.startswith(b"\xff\xd8"):
        raise Malformed("no SOI")
    out = bytearray(b"\xff\xd8")
    i, n = 2, len(data)
    while i < n:
        if data[i] != 0xFF:
            raise Malformed("expected a marker")
        while i + 1 < n and data[i + 1] == 0xFF:  # fill bytes before a marker
            i += 1
        if i + 1 >= n:
            break
        marker = data[i + 1]
        if marker == 0xD9:  # EOI: anything after it (trailers, hidden blobs) is dropped
            out += b"\xff\xd9"
            return bytes(out)
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:  # no length
            out += data[i : i + 2]
            i += 2
            continue
        if i + 4 > n:
            raise Malformed("truncated segment")
        end = i + 2 + struct.unpack(">H", data[i + 2 : i + 4])[0]
        if end > n:
            raise Malformed("truncated segment")
        body = data[i + 4 : end]
        if not _dropped(marker, body):
            out += data[i:end]
        i = end
        if marker == 0xDA:  # entropy-coded data runs to the next marker that isn't stuffing
            j = _next_marker(data, i)
            out += data[i:j]
            i = j
    out += b"\xff\xd9"  # a file cut before its EOI still ends like a JPEG
    return bytes(out)


def _dropped(marker: int, body: bytes) -> bool:
    if marker == 0xFE:  # COM
        return True
    if 0xE0 <= marker <= 0xEF:
        return not any(body.startswith(sig) for sig in _KEEP_APP.get(marker, ()))
    return False


def _next_marker(data: bytes, i: int) -> int:
    n = len(data)
    while True:
        j = data.find(b"\xff", i)
        if j < 0 or j + 1 >= n:
            return n
        following = data[j + 1]
        if following == 0x00 or 0xD0 <= following <= 0xD7:  # stuffed byte or restart
            i = j + 2
        elif following == 0xFF:
            i = j + 1
        else:
            return j


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_KEEP = {
    b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"cHRM", b"gAMA", b"iCCP", b"sBIT",
    b"sRGB", b"bKGD", b"pHYs", b"acTL", b"fcTL", b"fdAT", b"cICP", b"mDCv", b"cLLi",
}  # fmt: skip


def strip_png(data: bytes) -> bytes:
    if not data.startswith(_PNG_SIGNATURE):
        raise Malformed("no PNG signature")
    out = bytearray(_PNG_SIGNATURE)
    i, n = len(_PNG_SIGNATURE), len(data)
    while i + 8 <= n:
        length, kind = struct.unpack(">I4s", data[i : i + 8])
        end = i + 12 + length
        if end > n:
            raise Malformed("truncated chunk")
        if kind in _PNG_KEEP:
            out += data[i:end]
        i = end
        if kind == b"IEND":
            break
    return bytes(out)


_WEBP_DROP = {b"EXIF", b"XMP "}
_VP8X_EXIF, _VP8X_XMP = 0x08, 0x04


def strip_webp(data: bytes) -> bytes:
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        raise Malformed("no RIFF/WEBP header")
    end_of_riff = min(len(data), 8 + struct.unpack("<I", data[4:8])[0])
    chunks = bytearray()
    i = 12
    while i + 8 <= end_of_riff:
        kind = data[i : i + 4]
        size = struct.unpack("<I", data[i + 4 : i + 8])[0]
        end = i + 8 + size + (size & 1)
        if i + 8 + size > end_of_riff:
            raise Malformed("truncated chunk")
        chunk = bytearray(data[i:end])
        if kind == b"VP8X" and size >= 1:
            chunk[8] &= ~(_VP8X_EXIF | _VP8X_XMP) & 0xFF
        if kind not in _WEBP_DROP:
            chunks += chunk
        i = end
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WEBP" + bytes(chunks)


# Application extensions a GIF needs (its loop count, its colour profile); the rest go, XMP
# ("XMP DataXMP", where an editor writes a photo's GPS position) among them.
_GIF_KEEP_APPS = (b"NETSCAPE2.0", b"ANIMEXTS1.0", b"ICCRGBG1012")
_GIF_COMMENT, _GIF_APPLICATION = 0xFE, 0xFF


def strip_gif(data: bytes) -> bytes:
    if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 13:
        raise Malformed("no GIF header")
    i = 13 + _gif_colour_table(data[10])
    out = bytearray(data[:i])
    n = len(data)
    while i < n:
        block = data[i]
        if block == 0x3B:  # trailer: anything after it is dropped
            break
        if block == 0x21:  # extension: label, then sub-blocks
            if i + 2 > n:
                raise Malformed("truncated extension")
            label, end = data[i + 1], _gif_sub_blocks(data, i + 2)
            head = data[i + 3 : i + 14] if i + 2 < n and data[i + 2] == 11 else b""
            dropped = label == _GIF_COMMENT or (
                label == _GIF_APPLICATION and head not in _GIF_KEEP_APPS
            )
            if not dropped:
                out += data[i:end]
            i = end
        elif block == 0x2C:  # image: descriptor, local colour table, LZW code size, data
            if i + 10 > n:
                raise Malformed("truncated image descriptor")
            start = i
            i += 10 + _gif_colour_table(data[i + 9]) + 1  # the LZW minimum code size
            i = _gif_sub_blocks(data, i)
            out += data[start:i]
        else:
            raise Malformed("expected a GIF block")
    out += b"\x3b"  # a file cut before its trailer still ends like a GIF
    return bytes(out)


def _gif_colour_table(packed: int) -> int:
    return 3 * (2 ** ((packed & 0x07) + 1)) if packed & 0x80 else 0


def _gif_sub_blocks(data: bytes, i: int) -> int:
    """Where the sub-blocks from ``i`` end (after their zero terminator)."""
    n = len(data)
    while True:
        if i >= n:
            raise Malformed("truncated sub-blocks")
        size = data[i]
        i += 1 + size
        if size == 0:
            return i
