"""A Slack message's files: downloaded into the attachments storage when a token is given,
else carried as links.

Downloads are bounded: the attachments size limit (read in chunks, stopped past it), a
timeout, redirects followed only a few times, and only ``https`` (``http`` to loopback, for
tests and local mirrors). What fails to download or is refused by the upload checks (its
type, its size) is kept as a link, and the import says how many.
"""

from __future__ import annotations

import ipaddress
import logging
from urllib.parse import urlsplit

import httpx

from archives.slack.shapes import File
from attachments import limits, sniff
from attachments.models import Attachment
from attachments.service import clean_name, store_upload

logger = logging.getLogger(__name__)
TIMEOUT_S = 30


def _allowed(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    if parts.scheme == "http" and parts.hostname:
        try:
            return ipaddress.ip_address(parts.hostname).is_loopback
        except ValueError:
            return parts.hostname == "localhost"
    return False


def download(client: httpx.Client, url: str, token: str) -> bytes | None:
    if not _allowed(url):
        return None
    cap = limits.max_bytes()
    try:
        with client.stream("GET", url, headers={"Authorization": f"Bearer {token}"}) as r:
            if r.status_code != 200:
                return None
            data = bytearray()
            for chunk in r.iter_bytes():
                data += chunk
                if len(data) > cap:
                    return None
            return bytes(data)
    except httpx.HTTPError as exc:
        logger.warning("slack import: a file did not download: %s", type(exc).__name__)
        return None


def new_client() -> httpx.Client:
    return httpx.Client(timeout=TIMEOUT_S, follow_redirects=True, max_redirects=3)


def link_line(f: File) -> str:
    url = f.url_private or f.url_private_download
    name = clean_name(f.name or f.title or "file").replace("]", ")")
    return f"📎 [{name}]({url})" if url.startswith(("https://", "http://")) else f"📎 {name}"


def store(client, thread, uploader_id: str, f: File, token: str) -> Attachment | None:
    data = download(client, f.url_private_download or f.url_private, token)
    if data is None:
        return None
    try:
        return store_upload(thread, uploader_id, f.name or f.title or "file", data)
    except (sniff.Refused, ValueError) as exc:
        logger.info("slack import: a file kept as a link: %s", exc)
        return None
