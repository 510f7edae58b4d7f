"""``attachments.metadata.strip`` on hostile bytes: any prefix or mutation of a real image
either comes back as bytes no longer than it was or is refused as ``Malformed``; nothing
else is raised and nothing loops."""

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from attachments import metadata


def photo(fmt: str) -> bytes:
    exif = Image.Exif()
    exif[0x010F] = "Canon"
    out = io.BytesIO()
    extra = {"comment": b"home"} if fmt == "JPEG" else {}
    if fmt == "GIF":  # no EXIF in a GIF: the camera rides in a comment and an XMP packet
        extra = {"comment": b"Canon", "save_all": True, "loop": 0}
        frames = [Image.new("RGB", (24, 16), (200, 10, k)) for k in (10, 90)]
        frames[0].save(out, fmt, append_images=frames[1:], **extra)
        data = out.getvalue()
        at = 13 + (3 * 2 ** ((data[10] & 7) + 1) if data[10] & 0x80 else 0)  # its colour table
        return data[:at] + b"\x21\xff\x0bXMP DataXMP\x05Canon\x00" + data[at:]
    Image.new("RGB", (24, 16), (200, 10, 10)).save(out, fmt, exif=exif.tobytes(), **extra)
    return out.getvalue()


KINDS = {f"image/{fmt.lower()}": photo(fmt) for fmt in ("JPEG", "PNG", "WEBP", "GIF")}


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(sorted(KINDS)),
    cut=st.integers(min_value=0, max_value=2000),
    flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=8),
)
def test_strip_survives_cut_and_mutated_images(kind, cut, flips):
    data = bytearray(KINDS[kind][: max(0, len(KINDS[kind]) - cut)])
    for at, value in flips:
        if data:
            data[at % len(data)] = value
    try:
        out = metadata.strip(bytes(data), kind)
    except metadata.Malformed:
        return
    assert len(out) <= len(data) + 2  # at most an EOI (JPEG) or trailer (GIF) added when cut


def test_the_real_images_lose_their_metadata_and_still_open():
    for kind, data in KINDS.items():
        out = metadata.strip(data, kind)
        assert b"Canon" in data and b"Canon" not in out, kind
        with Image.open(io.BytesIO(out)) as image:
            image.load()
            assert image.size == (24, 16)
