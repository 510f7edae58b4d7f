"""What ``_entry.html`` shows for a chat entry's files, read from the entry alone.

The URLs name the thread and upload id; whether a viewer may fetch them (member, message
standing, bytes kept) is decided when fetched (``attachments.views``).
"""

from attachments.limits import human_size
from attachments.sniff import SAFE_IMAGES
from threads.entries import AttachmentRef

# The largest an inline preview is drawn, in CSS pixels (the thumbnail is at most 640×480).
PREVIEW_W, PREVIEW_H = 360, 270


def attachment_items(refs: list[AttachmentRef]) -> list[dict]:
    return [_item(ref) for ref in refs]


def _item(ref: AttachmentRef) -> dict:
    item = {
        "id": ref.id,
        "name": ref.name,
        "size": human_size(ref.size),
        "type": ref.contentType,
        "ext": badge(ref),
    }
    if ref.image is not None and ref.contentType in SAFE_IMAGES:
        scale = min(1.0, PREVIEW_W / ref.image.w, PREVIEW_H / ref.image.h)
        item["image"] = {
            "w": max(1, round(ref.image.w * scale)),
            "h": max(1, round(ref.image.h * scale)),
            "full": f"{ref.image.w}×{ref.image.h}",
        }
    return item


def badge(ref: AttachmentRef) -> str:
    """A short label for a file's kind: its name's extension, else its content type's."""
    stem, dot, ext = ref.name.rpartition(".")
    if dot and stem and 1 <= len(ext) <= 4 and ext.isalnum():
        return ext.upper()
    sub = ref.contentType.split("/")[-1].split("+")[0]
    return (sub if sub != "octet-stream" else "file")[:4].upper()
