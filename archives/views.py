"""The owners' export section of the house settings page: start an export, watch its
progress, download it until it expires. Owners only (``houses.access``); a member is
refused as on every owner page, and a stranger gets the house's 404."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from archives import jobs
from archives.models import ExportJob
from attachments import storage
from houses.access import access_owned_house


@login_required
@require_http_methods(["GET", "POST"])
def export_section(request, slug):
    house = access_owned_house(request.user, slug).house
    if request.method == "POST":
        drop = request.POST.get("drop_deleted_text") == "on"
        job = jobs.start(house, request.user, drop_deleted_text=drop)
    else:
        job = jobs.latest(house)
    context = {
        "house": house,
        "job": job,
        "busy": job is not None and job.state in ("queued", "running"),
    }
    if job is not None and job.total:
        context["percent"] = min(100, 100 * job.done // job.total)
    return render(request, "archives/_export.html", context)


@login_required
def download(request, slug, job_id: int):
    house = access_owned_house(request.user, slug).house
    job = ExportJob.objects.filter(pk=job_id, house=house, state=ExportJob.State.READY).first()
    if job is None or job.expires_at is None or job.expires_at <= timezone.now():
        raise Http404
    name = f"{house.slug}-{job.created_at:%Y%m%d-%H%M}.zip"
    response = FileResponse(
        storage.open_file(job.key),
        as_attachment=True,
        filename=name,
        content_type="application/zip",
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response
