"""Joining a house with an invite link, and owners making and revoking those links.

``GET /join/<token>`` only shows what would happen (link unfurlers and prefetchers
must not join anyone); ``POST`` joins, signing a new person up first if nobody is
signed in. Every miss is the same 404 (``houses.access.access_invite``).
"""

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from houses import email_address, email_pages
from houses.access import access_invite, access_owned_house
from houses.forms import InviteForm
from houses.invites import DEFAULT_DAYS, accept_invite, make_invite, revoke_invite
from houses.membership import HandleTaken
from houses.names import ascii_handle_base, check_username


class SignUpForm(UserCreationForm):
    """Username and password, held to ``AUTH_PASSWORD_VALIDATORS``; the username's handle
    may not be a bot's in the house being joined (a mention of it would be ambiguous).
    An email address is optional and only asked for here: it is confirmed by its link
    (``houses.email_address``) before anything is sent to it."""

    email = forms.EmailField(
        required=False,
        max_length=254,
        label="Email (optional)",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    field_order = ["username", "email", "password1", "password2"]

    class Meta(UserCreationForm.Meta):
        fields = ("username",)

    def __init__(self, *args, house=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.house = house

    def clean_username(self):
        username = super().clean_username()
        if username is None:  # Django refused it already (a case-insensitive duplicate)
            return None
        check_username(username)
        handle = ascii_handle_base(username)
        if self.house is not None and self.house.bots.filter(handle=handle).exists():
            raise forms.ValidationError(
                f"@{handle} is a bot in {self.house.name}; choose another username."
            )
        return username


@require_http_methods(["GET", "POST"])
def join(request, token):
    invite = access_invite(token, request.META.get("REMOTE_ADDR", ""))
    house, user = invite.house, request.user
    form, problem = None, ""
    if request.method == "POST":
        if user.is_authenticated:
            try:
                _, joined = accept_invite(invite, user)
            except HandleTaken as exc:
                problem = str(exc)
            else:
                if joined:
                    messages.success(request, f"Welcome to {house.name}.")
                return redirect("house", slug=house.slug)
        else:
            form = SignUpForm(request.POST, house=house)
    if form is not None and form.is_valid():
        try:
            with transaction.atomic():  # no account is left behind if joining is refused
                user = form.save()
                accept_invite(invite, user)
        except HandleTaken as exc:
            form.add_error("username", str(exc))
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome to {house.name}, {user.get_username()}.")
            if form.cleaned_data["email"]:
                _ask_for_email(request, user, form.cleaned_data["email"])
            return redirect("house", slug=house.slug)
    member = user.is_authenticated and house.memberships.filter(user=user).exists()
    context = {
        "house": house,
        "invite": invite,
        "form": form or SignUpForm(house=house),
        "is_member": member,
        "problem": problem,
        "login_url": f"{reverse('login')}?next={request.path}",
    }
    status = 409 if problem else 400 if form else 200
    return render(request, "houses/join.html", context, status=status)


def _ask_for_email(request, user, address: str) -> None:
    """After the account exists: its confirmation link is sent, or the page says why not."""
    try:
        pending, sent = email_address.ask(user, address, email_pages.site_of(request))
    except email_address.TooManyLinks as exc:  # a new account has sent none: not expected
        messages.error(request, str(exc))
        return
    if pending is not None:
        level = messages.info if sent else messages.error
        level(request, email_pages.sent_words(pending.address, sent))


@login_required
@require_POST
def new_invite(request, slug):
    """Answers with the link itself: it is in this response and nowhere else."""
    house = access_owned_house(request.user, slug).house
    form = InviteForm(request.POST)
    days = form.cleaned_data["days"] if form.is_valid() else DEFAULT_DAYS
    invite, raw = make_invite(house, request.user, days)
    link = request.build_absolute_uri(reverse("join", args=[raw]))
    context = {"house": house, "invite": invite, "link": link}
    return render(request, "houses/invite_made.html", context, status=201)


@login_required
@require_POST
def revoke_invite_form(request, slug, pk):
    house = access_owned_house(request.user, slug).house
    revoke_invite(get_object_or_404(house.invites, pk=pk))
    messages.success(request, "Invite link revoked: it no longer lets anyone in.")
    return redirect("members", slug=slug)
