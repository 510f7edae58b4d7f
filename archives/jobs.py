"""An owner's export, prepared in the background: the job row says how far it got, the
zip goes into the attachments storage, and the download expires.

The export runs in a thread of the web process (a house's export is read-only work on
its logs and files; it holds no lease and writes nothing but its own row and file). A
process that dies mid-export leaves a job that never finishes: it is shown as failed once
it is older than ``STALE``, and the owner starts another. Expired files are removed when
the page is next asked for (``expire``).
"""

from __future__ import annotations

import logging
import tempfile
import threading
from datetime import timedelta

from django.core.files import File
from django.db import close_old_connections
from django.utils import timezone

from archives.export import export_house
from archives.models import ExportJob
from attachments import storage

logger = logging.getLogger(__name__)
KEEP = timedelta(hours=24)  # how long a prepared archive can be downloaded
STALE = timedelta(hours=2)  # a job still running after this died with its process


def start(house, user, *, drop_deleted_text: bool = False, inline: bool = False) -> ExportJob:
    running = ExportJob.objects.filter(
        house=house,
        state__in=[ExportJob.State.QUEUED, ExportJob.State.RUNNING],
        created_at__gt=timezone.now() - STALE,
    ).first()
    if running is not None:
        return running  # one at a time per house
    job = ExportJob.objects.create(
        house=house, requested_by=user, drop_deleted_text=drop_deleted_text
    )
    if inline:
        run(job.pk)
    else:
        threading.Thread(target=run, args=(job.pk,), name=f"export-{job.pk}", daemon=True).start()
    return job


def run(job_id: int) -> None:
    try:
        job = ExportJob.objects.select_related("house").get(pk=job_id)
        ExportJob.objects.filter(pk=job_id).update(state=ExportJob.State.RUNNING)

        def progress(done: int, total: int) -> None:
            ExportJob.objects.filter(pk=job_id).update(done=done, total=total)

        with tempfile.NamedTemporaryFile(suffix=".zip") as out:
            drop = job.drop_deleted_text
            export_house(job.house, out.name, drop_deleted_text=drop, progress=progress)
            out.seek(0, 2)
            size = out.tell()
            out.seek(0)
            # Streamed into the storage from the file, never whole in memory.
            key = storage.store().save(f"exports/{job.house_id}/{job.pk}.zip", File(out))
        ExportJob.objects.filter(pk=job_id).update(
            state=ExportJob.State.READY, key=key, size=size, expires_at=timezone.now() + KEEP
        )
    except Exception as exc:  # the page says it failed; the log has why
        logger.exception("export job %s failed", job_id)
        ExportJob.objects.filter(pk=job_id).update(
            state=ExportJob.State.FAILED, error=f"The export failed ({type(exc).__name__})."
        )
    finally:
        close_old_connections()


def expire(house) -> None:
    now = timezone.now()
    for job in ExportJob.objects.filter(
        house=house, state=ExportJob.State.READY, expires_at__lte=now
    ):
        storage.delete(job.key)
        job.delete()
    ExportJob.objects.filter(
        house=house,
        state__in=[ExportJob.State.QUEUED, ExportJob.State.RUNNING],
        created_at__lte=now - STALE,
    ).update(state=ExportJob.State.FAILED, error="The export stopped with its server process.")


def latest(house) -> ExportJob | None:
    expire(house)
    return ExportJob.objects.filter(house=house).first()
