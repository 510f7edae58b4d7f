"""A photo's metadata (GPS position, camera, XMP, comments) never reaches the house: the
stored and served bytes of an uploaded image are without it, turned upright first."""

import io

import pytest
from django.core.files.storage import storages
from PIL import Image

from attachments.models import Attachment
from tests.integration.attachments import files
from tests.integration.attachments.test_attachments import body_of, file_url, post_with, upload

pytestmark = pytest.mark.django_db(transaction=True)

GPS, MAKE, MODEL, ORIENTATION = 0x8825, 0x010F, 0x0110, 0x0112


def assert_clean(data: bytes):
    image = Image.open(io.BytesIO(data))
    exif = image.getexif()
    assert GPS not in exif and MAKE not in exif and MODEL not in exif, dict(exif)
    assert not exif.get_ifd(GPS)
    for leak in (b"Canon", b"EOS 5D", b"xmpmeta", b"taken at home", b"GPS"):
        assert leak not in data, leak
    assert "comment" not in image.info and "exif" not in image.info
    image.load()  # still a whole image


def served_and_stored(world, data: bytes, name: str) -> tuple[dict, bytes, bytes]:
    author = world.client_for(world.author)
    up = upload(author, world.thread, data, name)
    assert up.status_code == 201, up.content
    a = up.json()["attachment"]
    assert post_with(author, world.thread, [a["id"]]).status_code == 201
    got = world.client_for(world.member).get(file_url(world.thread, a["id"]))
    assert got.status_code == 200
    served = body_of(got)
    row = Attachment.objects.get(id=a["id"])
    with storages["attachments"].open(row.key, "rb") as handle:
        stored = handle.read()
    assert row.size == len(stored) == int(got["Content-Length"])
    return a, served, stored


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
def test_a_photos_gps_and_camera_are_not_kept(world, storage_kind, fmt):
    original = files.photo(fmt)
    assert b"Canon" in original  # the camera's metadata is there to begin with
    a, served, stored = served_and_stored(world, original, f"holiday.{fmt.lower()}")
    assert served == stored
    assert_clean(served)
    assert a["image"] == {"w": 40, "h": 20}
    with Image.open(io.BytesIO(served)) as image:
        assert image.size == (40, 20)
        assert image.format == fmt
        if fmt != "JPEG":  # lossless: the very same pixels
            assert (
                image.convert("RGB").tobytes()
                == Image.open(io.BytesIO(original)).convert("RGB").tobytes()
            )


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
def test_a_photo_taken_sideways_is_kept_upright(world, files_on_disk, fmt):
    """EXIF orientation 6 (turn 90° clockwise): the stored image is turned, its tag gone."""
    a, served, _ = served_and_stored(world, files.photo(fmt, orientation=6), "sideways.jpg")
    assert_clean(served)
    assert a["image"] == {"w": 20, "h": 40}
    with Image.open(io.BytesIO(served)) as image:
        assert image.size == (20, 40)
        assert image.getexif().get(ORIENTATION, 1) == 1
        # The blue corner, top-left in the sensor's frame, is now top-right.
        r, g, b = image.convert("RGB").getpixel((17, 2))
        assert b > 200 and r < 60, (r, g, b)


def test_a_jpeg_without_metadata_is_kept_byte_for_byte(world, files_on_disk):
    plain = files.jpeg(64, 48)
    _, served, _ = served_and_stored(world, plain, "plain.jpg")
    assert served == plain


def test_a_gifs_xmp_and_comment_are_not_kept_and_it_still_moves(world, storage_kind):
    """A GIF has no EXIF, but an editor's XMP packet (GPS, camera) and comments ride in its
    extensions: they go; its frames, timing and loop stay."""
    original = files.gif_photo(frames=2)
    assert b"GPSLatitude" in original and b"taken at home" in original
    a, served, stored = served_and_stored(world, original, "moving.gif")
    assert served == stored
    assert_clean(served)
    assert b"XMP DataXMP" not in served
    assert a["image"] == {"w": 40, "h": 20}
    with Image.open(io.BytesIO(served)) as image, Image.open(io.BytesIO(original)) as before:
        assert image.format == "GIF" and image.n_frames == 2
        assert image.info["loop"] == 0 and image.info["duration"] == 100
        for frame in range(2):
            image.seek(frame)
            before.seek(frame)
            assert image.convert("RGB").tobytes() == before.convert("RGB").tobytes()


def test_a_gif_without_metadata_is_kept_byte_for_byte(world, files_on_disk):
    out = io.BytesIO()
    Image.new("RGB", (30, 10), (10, 120, 30)).save(out, "GIF")
    _, served, _ = served_and_stored(world, out.getvalue(), "plain.gif")
    assert served == out.getvalue()
