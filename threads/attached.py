"""What ``_entry.html`` shows for a chat entry's files, read from the entry alone.

The URLs name the thread and upload id; whether a viewer may fetch them (member, message
standing, bytes kept) is decided when fetched (``attachments.views``).
"""

from attachments.limits import human_size
from threads.entries import AttachmentRef

# Images shown inline. Anything else, SVG included (it can carry script), is a download.
SAFE_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

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


def files_line(refs: list[AttachmentRef]) -> str:
    """The files of a message in words, for a bot's prompt and the terminal."""
    if not refs:
        return ""
    parts = []
    for ref in refs:
        dims = f", {ref.image.w}×{ref.image.h}" if ref.image else ""
        parts.append(f"{ref.name} ({ref.contentType}{dims}, {human_size(ref.size)})")
    return "[attached: " + "; ".join(parts) + "]"


def with_files(text: str, refs: list[AttachmentRef]) -> str:
    line = files_line(refs)
    return f"{text}\n{line}" if text and line else text or line
