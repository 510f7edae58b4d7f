"""The email part of ``/account/`` and the page a confirmation link opens (thin views over
``houses.email_address``)."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from houses import email_address
from houses.account import render_account
from houses.email_address import AddressTaken, BadLink, TooManyLinks


class EmailForm(forms.Form):
    email = forms.EmailField(max_length=254, label="Email address")


def back_to_card():
    """The account page at the email card (below the fold on a phone)."""
    return redirect(reverse("account") + "#email")


def site_of(request) -> str:
    """Where links in mail sent from this request point: the host it came to (one of
    ``ALLOWED_HOSTS``), as invite links do."""
    return request.build_absolute_uri("/").rstrip("/")


def sent_words(address: str, sent: bool) -> str:
    if sent:
        return (
            f"We sent a link to {address}. Open it within {email_address.max_age_words()} "
            "to confirm the address."
        )
    return f"We couldn't send email to {address} just now. Try “Resend” in a minute."


@login_required
@require_POST
def set_email(request):
    form = EmailForm(request.POST)
    if not form.is_valid():
        return render_account(request, email_form=form, status=400)
    try:
        pending, sent = email_address.ask(
            request.user, form.cleaned_data["email"], site_of(request)
        )
    except TooManyLinks as exc:
        form.add_error("email", str(exc))
        return render_account(request, email_form=form, status=429)
    if pending is None:
        messages.success(request, "That is already your confirmed address.")
    elif sent:  # the waiting box below says the rest
        messages.success(request, f"Link sent to {pending.address}.")
    else:
        messages.error(request, sent_words(pending.address, sent))
    return back_to_card()


@login_required
@require_POST
def resend(request):
    try:
        pending, sent = email_address.resend(request.user, site_of(request))
    except TooManyLinks as exc:
        messages.error(request, str(exc))
        return back_to_card()
    if pending is not None and sent:
        messages.success(request, f"Link sent again to {pending.address}.")
    elif pending is not None:
        messages.error(request, sent_words(pending.address, sent))
    return back_to_card()


@login_required
@require_POST
def cancel(request):
    email_address.cancel(request.user)
    messages.success(request, "The address waiting to be confirmed was dropped.")
    return back_to_card()


@login_required
@require_POST
def remove(request):
    email_address.remove(request.user, site_of(request))
    messages.success(request, "Your email address was removed: nothing will be emailed to you.")
    return back_to_card()


@require_http_methods(["GET", "POST"])
def confirm(request, token):
    """``GET`` only shows what the link would confirm (mail scanners open links);
    ``POST`` confirms. Signed in or not: the signed link names the account."""
    try:
        pending = email_address.pending_for(token)
    except BadLink as exc:
        return render(request, "houses/email_confirm.html", {"problem": str(exc)}, status=400)
    context = {"pending": pending, "account": pending.user.get_username()}
    if request.method == "POST":
        try:
            address = email_address.confirm(pending, site_of(request))
        except (BadLink, AddressTaken) as exc:
            context["problem"] = str(exc)
            return render(request, "houses/email_confirm.html", context, status=409)
        if request.user.is_authenticated and request.user.pk == pending.user_id:
            messages.success(
                request, f"{address} is confirmed: notifications can be emailed to it."
            )
            return back_to_card()
        context["confirmed"] = address
    return render(request, "houses/email_confirm.html", context)
