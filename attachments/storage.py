"""Where attachment bytes are kept: Django's storage API, alias ``attachments``.

The filesystem under ``ARBE_VAR_DIR/attachments`` by default (0700 directories, 0600
files, like the rest of ``var/``); S3-compatible storage through django-storages when
``ARBE_ATTACHMENTS_S3_BUCKET`` is set (arbe_site/settings.py). The app reads the bytes
back and serves them itself, so the bucket stays private and no signed URL leaves it.
"""

from django.core.files.base import ContentFile
from django.core.files.storage import storages


def store():
    return storages["attachments"]


def save(key: str, data: bytes) -> str:
    """Write ``data`` under ``key``; the storage may pick another name (it never
    overwrites), and that name is what the row keeps."""
    return store().save(key, ContentFile(data))


def open_file(key: str):
    return store().open(key, "rb")


def delete(key: str) -> None:
    if key:
        store().delete(key)
