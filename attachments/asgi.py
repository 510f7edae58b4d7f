"""A cap on upload bodies, before Django reads them.

Django's ASGI handler spools a whole request body to a temporary file before any view runs,
and ``DATA_UPLOAD_MAX_MEMORY_SIZE`` leaves file parts out, so without this a client could
fill the disk with one upload. Bodies of the upload route over ``ARBE_ATTACHMENTS_MAX_BYTES``
plus room for the multipart framing are answered 413 as soon as the declared length or the
bytes received say so.
"""

import re

from django.conf import settings

UPLOAD_PATH = re.compile(r"^/api/threads/[^/]+/attachments$")
FRAMING = 64 * 1024  # multipart boundaries and part headers


def _too_large() -> tuple[dict, dict]:
    limit = settings.ARBE_ATTACHMENTS_MAX_BYTES
    text = f'{{"error": "Files may be at most {limit} bytes."}}'.encode()
    start = {
        "type": "http.response.start",
        "status": 413,
        "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
    }
    return start, {"type": "http.response.body", "body": text}


def cap_uploads(app):
    async def capped(scope, receive, send):
        if scope["type"] != "http" or not UPLOAD_PATH.match(scope["path"]):
            return await app(scope, receive, send)
        cap = settings.ARBE_ATTACHMENTS_MAX_BYTES + FRAMING
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            for message in _too_large():
                await send(message)
            return None
        seen = 0
        over = False
        started = False

        async def counted():
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    over = True
                    return {"type": "http.disconnect"}  # Django stops reading and gives up
            return message

        async def tracked(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await app(scope, counted, tracked)
        if over and not started:
            for message in _too_large():
                await send(message)
        return None

    return capped
