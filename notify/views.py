"""The notification settings page, a thread's mode, push devices and the service worker."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from arbe_lib.api import api_view, decode_body, json_response, people_only, request_body
from houses.access import access_house, access_person_thread
from notify import devices
from notify.bell import bell_context, modes_of
from notify.keys import public_key
from notify.models import (
    HouseNotify,
    Level,
    NotifySettings,
    PushDevice,
    ThreadMode,
    ThreadNotify,
)
from threads.views import viewer

SERVICE_WORKER = Path(__file__).resolve().parent.parent / "static" / "arbe" / "sw.js"


def settings_of(user) -> NotifySettings:
    return NotifySettings.objects.filter(user=user).first() or NotifySettings(user=user)


def thread_mode(user, thread_id: str) -> str:
    """``all``, ``mute`` or ``""`` (the person's level applies)."""
    return modes_of(user, thread_id)[0]


@login_required
def settings_page(request):
    chosen = settings_of(request.user)
    if request.method == "POST":
        level = request.POST.get("level", "")
        if level not in Level.values:
            return HttpResponseBadRequest("Choose what to be notified about.")
        chosen.level = level
        if request.user.email:  # without an address the box is disabled: keep the choice
            chosen.email = request.POST.get("email") == "on"
        chosen.save()
        messages.success(request, "Saved.")
        return redirect("notify-settings")
    context = {
        "chosen": chosen,
        "levels": Level.choices,
        "devices": PushDevice.objects.filter(user=request.user).order_by("-created_at"),
        "threads": ThreadNotify.objects.filter(user=request.user)
        .select_related("thread__house")
        .order_by("mode", "thread__title"),
        "muted_houses": HouseNotify.objects.filter(user=request.user)
        .select_related("house")
        .order_by("house__name"),
        "vapid_key": public_key(),
        "email_delay_min": max(1, round(settings.NOTIFY_EMAIL_DELAY_S / 60)),
    }
    return render(request, "notify/settings.html", context)


@login_required
@require_POST
def set_thread_mode(request, thread_id):
    """The thread page's bell: every message, the person's level, or muted."""
    access = access_person_thread(viewer(request.user), thread_id)
    mode = request.POST.get("mode", "")
    if mode not in ("", *ThreadMode.values):
        return HttpResponseBadRequest("Choose every message, your setting, or mute.")
    if mode:
        ThreadNotify.objects.update_or_create(
            user=request.user, thread=access.thread, defaults={"mode": mode}
        )
    else:
        ThreadNotify.objects.filter(user=request.user, thread=access.thread).delete()
    if request.htmx:
        return render(request, "notify/_bell.html", bell_context(request.user, access.thread))
    if request.POST.get("next") == "settings":
        return redirect("notify-settings")
    return redirect("thread", thread_id)


@login_required
@require_POST
def set_house_mode(request, slug):
    """The house page's Mute: nothing from its threads notifies you (``mute``), or back
    (``""``). The house's items still fill the inbox and its counts still show."""
    access = access_house(request.user, slug)
    mode = request.POST.get("mode", "")
    if mode not in ("", ThreadMode.MUTE):
        return HttpResponseBadRequest("Choose mute or unmute.")
    if mode:
        HouseNotify.objects.get_or_create(user=request.user, house=access.house)
        messages.success(request, f"{access.house.name} is muted: nothing from it notifies you.")
    else:
        HouseNotify.objects.filter(user=request.user, house=access.house).delete()
        messages.success(request, f"{access.house.name} notifies you again.")
    if request.POST.get("next") == "settings":
        return redirect("notify-settings")
    return redirect("house", access.house.slug)


@login_required
@require_POST
def remove_device(request, pk):
    PushDevice.objects.filter(user=request.user, pk=pk).delete()
    messages.success(request, "That device gets no more notifications.")
    return redirect("notify-settings")


@api_view
@require_POST
def device_api(request):
    """``POST`` a browser's ``PushSubscription`` (JSON): this device gets pushes from now on."""
    user = people_only(request.principal).user
    sub = decode_body(request_body(request), devices.Subscription, devices.BadInput)
    device = devices.subscribe(user, sub)
    return json_response({"id": device.pk}, status=201)


@api_view
@require_POST
def forget_device_api(request):
    user = people_only(request.principal).user
    body = decode_body(request_body(request), devices.Forget, devices.BadInput)
    return json_response({"removed": devices.forget(user, body.endpoint)})


@require_safe
@never_cache
def service_worker(request):
    """``/sw.js``: served from the root so its scope is the whole site."""
    response = HttpResponse(SERVICE_WORKER.read_bytes(), content_type="text/javascript")
    response["Service-Worker-Allowed"] = "/"
    return response
