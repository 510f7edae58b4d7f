"""The house settings page: create a house, rename it, hand it over, leave it.

Thin views over ``houses.founding``; every check goes through ``houses.access``.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from houses import founding
from houses.access import access_house, access_owned_house
from houses.membership import LastOwnerError


@login_required
@require_POST
def new_house(request):
    try:
        house = founding.create_house(request.user, request.POST.get("name", ""))
    except (founding.BadHouseName, PermissionDenied) as exc:
        messages.error(request, str(exc))
        return redirect("home")
    messages.success(request, f"{house.name} is yours: start a thread, or invite people.")
    return redirect("house", slug=house.slug)


@login_required
def settings_page(request, slug):
    access = access_house(request.user, slug)
    house = access.house
    others = (
        house.memberships.select_related("user__agent")
        .exclude(pk=access.membership.pk)
        .order_by("user__username")
    )
    others = list(others)
    # The last owner can't leave yet: their Leave asks nothing, the answer says why.
    last_owner = access.membership.is_owner and not any(m.is_owner for m in others)
    context = {
        "house": house,
        "membership": access.membership,
        "others": others,
        "last_owner": last_owner,
    }
    return render(request, "houses/settings.html", context)


@login_required
@require_POST
def rename_form(request, slug):
    house = access_owned_house(request.user, slug).house
    try:
        founding.rename_house(house, request.POST.get("name", ""))
        messages.success(request, "Renamed.")
    except founding.BadHouseName as exc:
        messages.error(request, str(exc))
    return redirect("house-settings", slug=slug)


@login_required
@require_POST
def hand_over_form(request, slug):
    access = access_owned_house(request.user, slug)
    receiver = get_object_or_404(access.house.memberships, pk=request.POST.get("to") or 0)
    try:
        founding.hand_over(access.house, access.membership, receiver)
    except LastOwnerError as exc:
        messages.error(request, str(exc))
        return redirect("house-settings", slug=slug)
    messages.success(request, f"{receiver.user.get_username()} owns {access.house.name} now.")
    return redirect("house-settings", slug=slug)


@login_required
@require_POST
def leave_form(request, slug):
    access = access_house(request.user, slug)
    try:
        founding.leave_house(access.membership)
    except LastOwnerError as exc:
        messages.error(request, str(exc))
        return redirect("house-settings", slug=slug)
    messages.success(request, f"You left {access.house.name}.")
    return redirect("home")
