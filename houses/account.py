"""Your account: display name, email, password, time zone; your API tokens live under it.

The display name is the person's agent's (what every thread shows). The password is
changed by Django's own ``PasswordChangeView``, which keeps this session signed in
(``update_session_auth_hash``) and ends the others. The time zone is this browser's
``tz`` cookie (``arbe_lib.zones``), pinned so the page script stops following the
browser's own; "Automatic" unpins it.
"""

from __future__ import annotations

import zoneinfo

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import PasswordChangeView
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse_lazy

from arbe_lib.zones import COOKIE, BadZone, zone_named
from houses.email_address import max_age_words
from houses.membership import agent_for_user
from houses.models import PendingEmail
from houses.names import check_display_name
from houses.renaming import rename
from threads.entry_views import avatar
from threads.narration import Name

PINNED = "tz_pinned"  # the page script leaves a pinned "tz" alone (static/arbe/when.js)
YEAR_S = 365 * 24 * 3600


class AccountForm(forms.Form):
    display_name = forms.CharField(max_length=100, label="Display name")
    time_zone = forms.CharField(max_length=64, required=False, label="Time zone")

    def clean_display_name(self):
        name = self.cleaned_data["display_name"].strip()
        if not name:
            raise ValidationError("A display name can't be blank.")
        check_display_name(name)
        return name

    def clean_time_zone(self):
        name = self.cleaned_data["time_zone"].strip()
        if not name:
            return ""
        try:
            zone_named(name)
        except BadZone:
            raise ValidationError(
                f"{name!r} is not a time zone: pick one like Europe/Paris."
            ) from None
        return name


def zones() -> list[str]:
    return sorted(zoneinfo.available_timezones() - {"localtime", "Factory"})


@login_required
def account_page(request):
    agent = agent_for_user(request.user)
    if request.method == "POST":
        form = AccountForm(request.POST)
        if form.is_valid():
            if form.cleaned_data["display_name"] != agent.display_name:
                rename(agent, form.cleaned_data["display_name"])
            response = redirect("account")
            zone = form.cleaned_data["time_zone"]
            if zone:
                response.set_cookie(COOKIE, zone, max_age=YEAR_S, samesite="Lax")
                response.set_cookie(PINNED, "1", max_age=YEAR_S, samesite="Lax")
            else:
                response.delete_cookie(PINNED)
            messages.success(request, "Saved.")
            return response
        return render_account(request, form=form, status=400)
    return render_account(request)


def render_account(request, *, form=None, email_form=None, status=200):
    """The page, with either form's errors (the email part posts to ``houses.email_pages``)."""
    agent = agent_for_user(request.user)
    if form is None:
        pinned = request.COOKIES.get(COOKIE, "") if request.COOKIES.get(PINNED) else ""
        form = AccountForm(initial={"display_name": agent.display_name, "time_zone": pinned})
    name = Name(agent.display_name, agent.handle)
    context = {
        "form": form,
        "agent": agent,
        "avatar": avatar(agent.id, name),
        "zones": zones(),
        "email_form": email_form,
        "pending_email": PendingEmail.objects.filter(user=request.user).first(),
        "email_hours": max_age_words(),
    }
    return render(request, "houses/account.html", context, status=status)


class PasswordChange(PasswordChangeView):
    """Django's view (it keeps this session via ``update_session_auth_hash``), on our page."""

    template_name = "houses/password.html"
    success_url = reverse_lazy("account")

    def form_valid(self, form):
        messages.success(self.request, "Your password was changed. Other sessions are signed out.")
        return super().form_valid(form)
