"""The owners' export on the house settings page: prepared in the background with
progress, downloaded by owners only, gone when it expires."""

import io
import json
import time
import zipfile
from datetime import timedelta

import pytest
from django.utils import timezone

from archives.models import ExportJob
from tests.factories import make_user
from tests.integration.archives.seeding import client_for, seed_house

pytestmark = pytest.mark.django_db(transaction=True)


def wait_ready(job_id: int) -> ExportJob:
    for _ in range(200):
        job = ExportJob.objects.get(pk=job_id)
        if job.state in ("ready", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError("the export did not finish")


def test_an_owner_prepares_and_downloads_the_archive(files_on_disk):
    seeded = seed_house()
    owner = client_for(seeded.owner)
    settings_page = owner.get("/houses/acme/settings/").content.decode()
    assert 'hx-get="/houses/acme/settings/export"' in settings_page
    started = owner.post("/houses/acme/settings/export", {"drop_deleted_text": "on"})
    assert started.status_code == 200
    job = wait_ready(ExportJob.objects.get().pk)
    assert job.state == "ready" and job.total and job.done == job.total
    section = owner.get("/houses/acme/settings/export").content.decode()
    assert f"/houses/acme/settings/export/{job.pk}.zip" in section and "Download" in section
    response = owner.get(f"/houses/acme/settings/export/{job.pk}.zip")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    data = b"".join(response.streaming_content)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        manifest = json.loads(z.read("manifest.json"))
        plans = [t for t in json.loads(z.read("threads.json")) if t["title"] == "Plans"][0]
        log = z.read(f"threads/{plans['id']}.jsonl").decode()
    assert manifest["deletedTextDropped"] is True and manifest["counts"]["threads"] == 5
    assert "a secret I regret" not in log and "(deleted)" in log
    # Members and strangers get nothing; an expired link is gone.
    assert (
        client_for(seeded.member).get(f"/houses/acme/settings/export/{job.pk}.zip").status_code
        == 403
    )
    stranger = make_user("stranger")
    assert client_for(stranger).get(f"/houses/acme/settings/export/{job.pk}.zip").status_code == 404
    ExportJob.objects.filter(pk=job.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert owner.get(f"/houses/acme/settings/export/{job.pk}.zip").status_code == 404
    owner.get("/houses/acme/settings/export")  # the page's next look removes it
    assert not ExportJob.objects.exists()
