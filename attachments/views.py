"""Attachment routes: upload (API), fetch (members only), purge (owners).

Files are served by the app through Django's storage API, never as active content from
this origin: ``nosniff``, a sandboxing CSP, ``attachment`` disposition for anything but
safe raster images (SVG and HTML are downloads), and private caching.
"""

import logging
from urllib.parse import quote

from django.http import FileResponse, Http404, HttpResponse
from django.views.decorators.http import require_http_methods

from arbe_lib.api import api_view, json_response
from attachments import limits, service, sniff, storage
from houses.access import access_person_thread, access_thread
from houses.auth import principal_from_request

logger = logging.getLogger(__name__)
DAMAGED = "This file is damaged on the server and can't be sent. An owner can remove it."


def row_json(row) -> dict:
    ref = service.ref_of(row)
    return {
        "attachment": {
            "id": ref.id,
            "name": ref.name,
            "size": ref.size,
            "sizeText": limits.human_size(ref.size),
            "contentType": ref.contentType,
            "image": {"w": row.width, "h": row.height} if row.is_image else None,
            "url": f"/attachments/{row.thread_id}/{row.id}/file",
            "thumb": f"/attachments/{row.thread_id}/{row.id}/thumb" if row.thumb_key else None,
        }
    }


@api_view
@require_http_methods(["POST"])
def upload(request, thread_id):
    """One file per request, as the multipart field ``file``."""
    access = access_person_thread(request.principal, thread_id)
    upload = request.FILES.get("file")
    if upload is None:
        raise sniff.Refused("file: send one file as the multipart field `file`.")
    service.check_size(upload.size)  # before reading it
    row = service.upload(access, upload.name, upload.read(limits.max_bytes() + 1))
    return json_response(row_json(row), status=201)


@api_view
@require_http_methods(["DELETE"])
def purge(request, thread_id, entry_id):
    access = access_person_thread(request.principal, thread_id)
    result, entry = service.purge(access, entry_id)
    return json_response({"entry": entry.id, "offset": result.next_offset or ""})


@require_http_methods(["GET", "HEAD"])
def fetch(request, thread_id, attachment_id, part):
    """The file (or its thumbnail) for a member of the house; 404 for everyone else."""
    try:
        principal = principal_from_request(request)
    except Exception:  # noqa: BLE001 - bad credentials learn nothing more than a non-member
        raise Http404 from None
    access = access_thread(principal, thread_id)
    row = service.shown(access, attachment_id)
    if part == "thumb":
        if not row.thumb_key:
            raise Http404
        thumb_type = "image/png" if row.thumb_key.endswith(".png") else "image/jpeg"
        key, content_type, inline = row.thumb_key, thumb_type, True
    elif part == "file":
        key, content_type = row.key, row.content_type
        inline = content_type in sniff.SAFE_IMAGES and "download" not in request.GET
    else:
        raise Http404
    try:
        handle = storage.open_file(key)
        # A response promising the recorded length and sending other bytes leaves the client
        # waiting for the rest: a damaged file (a truncated write, a replaced object) is an
        # error said at once.
        stored = handle.size if part == "file" and row.size else None
    except (FileNotFoundError, OSError):
        raise Http404 from None
    if stored is not None and stored != row.size:
        handle.close()
        logger.error(
            "attachment %s is damaged: %s bytes stored, %s recorded", row.id, stored, row.size
        )
        return HttpResponse(DAMAGED, status=500, content_type="text/plain; charset=utf-8")
    response = FileResponse(handle, content_type=content_type)
    disposition = "inline" if inline else "attachment"
    response["Content-Disposition"] = f"{disposition}; filename*=UTF-8''{quote(row.name)}"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, max-age=3600"
    response["Cross-Origin-Resource-Policy"] = "same-origin"
    if row.size and part == "file":
        response["Content-Length"] = str(row.size)
    return response
