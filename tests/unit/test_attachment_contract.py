"""Attachments in the entry contract, the page's view of them, and sniffing by content."""

import io

import msgspec
import pytest
from PIL import Image

from attachments import sniff
from threads import entries as E
from threads.attached import attachment_items, badge
from threads.projection import visible_entries

PNG_REF = E.AttachmentRef(
    id="a1", name="shot.png", size=2048, contentType="image/png", image=E.ImageSize(w=1600, h=900)
)
PDF_REF = E.AttachmentRef(id="a2", name="plan.pdf", size=45, contentType="application/pdf")


def test_chat_may_be_files_alone_but_not_empty():
    files_only = E.convert_payload(
        {"type": "chat", "text": "", "attachments": [msgspec.to_builtins(PDF_REF)]}
    )
    assert files_only.attachments == [PDF_REF]
    with pytest.raises(E.EntryError, match=r"\$\.payload\.text"):
        E.convert_payload({"type": "chat", "text": ""})


@pytest.mark.parametrize(
    "ref, field",
    [
        ({"id": "bad id", "name": "x", "size": 1, "contentType": "a/b"}, "attachments[0].id"),
        ({"id": "a", "name": "", "size": 1, "contentType": "a/b"}, "attachments[0].name"),
        ({"id": "a", "name": "x", "size": -1, "contentType": "a/b"}, "attachments[0].size"),
        ({"id": "a", "name": "x", "size": 1, "contentType": "a/b", "evil": 1}, "evil"),
        ({"id": "a", "name": "x", "size": 1, "contentType": "a/b", "image": {"w": 0, "h": 1}}, "w"),
    ],
)
def test_bad_attachment_refs_are_refused_naming_the_field(ref, field):
    with pytest.raises(E.EntryError, match=field.replace("[", r"\[").replace("]", r"\]")):
        E.convert_payload({"type": "chat", "text": "x", "attachments": [ref]})


def test_too_many_attachments_are_refused():
    refs = [msgspec.to_builtins(PDF_REF)] * (E.MAX_ATTACHMENTS + 1)
    with pytest.raises(E.EntryError, match="attachments"):
        E.convert_payload({"type": "chat", "text": "x", "attachments": refs})


def test_a_plain_chat_encodes_as_before():
    entry = E.Entry(id="e", ts=1, payload=E.Chat(text="hi"))
    assert E.encode_entry(entry) == b'{"id":"e","ts":1,"payload":{"type":"chat","text":"hi"}}'


def test_page_items_scale_previews_and_label_files():
    image, pdf = attachment_items([PNG_REF, PDF_REF])
    assert image["image"] == {"w": 360, "h": 202, "full": "1600×900"}
    assert image["size"] == "2 KB"
    assert "image" not in pdf and pdf["ext"] == "PDF" and pdf["size"] == "45 bytes"
    # An SVG or HTML ref never renders as an inline image, whatever it claims.
    svg = E.AttachmentRef(
        id="s", name="x.svg", size=9, contentType="image/svg+xml", image=E.ImageSize(w=9, h=9)
    )
    assert "image" not in attachment_items([svg])[0]
    assert badge(E.AttachmentRef(id="b", name="blob", size=1, contentType="text/plain")) == "PLAI"


def test_a_purge_folds_the_files_out_of_the_page_view():
    log = [
        E.Entry(id="c1", ts=1, payload=E.Chat(text="", attachments=[PNG_REF])),
        E.Entry(id="c2", ts=2, payload=E.Chat(text="kept", attachments=[PDF_REF])),
        E.Entry(id="p", ts=3, payload=E.FilesPurged(entryId="c1", attachmentIds=["a1"])),
    ]
    shown = {e.id: e.payload for e in visible_entries(log)}
    assert shown["c1"].attachments == [] and shown["c1"].text == "*Files removed.*"
    assert shown["c2"].attachments == [PDF_REF]
    assert log[0].payload.attachments == [PNG_REF]  # the log itself is untouched


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", (50, 40)).save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize(
    "data, kind",
    [
        (b"%PDF-1.7\n", "application/pdf"),
        (b"PK\x03\x04rest", "application/zip"),
        (b"hello\nworld", "text/plain"),
        (b"  <!DOCTYPE html><p>", "text/html"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml"),
        (b"<?xml version='1.0'?><svg/>", "image/svg+xml"),
        (b"\x00\x01\x02", "application/octet-stream"),
        ("naïve café".encode()[:-1], "text/plain"),  # a character cut at the end
    ],
)
def test_sniffing_by_content(data, kind):
    assert sniff.sniff(data) == kind


def test_a_png_is_verified_and_thumbnailed():
    found = sniff.inspect(_png(), max_pixels=10_000)
    assert (found.content_type, found.width, found.height) == ("image/png", 50, 40)
    assert sniff.thumb_type(found.thumbnail) == "image/png"  # transparency kept
    with pytest.raises(sniff.Refused) as refused:
        sniff.inspect(_png(), max_pixels=1_000)
    assert refused.value.status == 413
