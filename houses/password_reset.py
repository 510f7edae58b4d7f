""" "Forgot password?": Django's reset views, on our pages, throttled.

The mail goes only to a confirmed address (``User.email``; an address still waiting for its
link is in ``PendingEmail`` and never matches) of an active account with a password. The
page after asking is the same whether or not an account has the address. Requests are
counted per client address and per address typed (``houses.mail_limits``); over either, a
429 page. Django's token is bound to the password hash, last sign-in and email, so a link
works once and stops when any of them changes; it expires after ``PASSWORD_RESET_TIMEOUT``.
Setting the new password saves the user, and ``houses.revocation`` ends every session still
on the old hash and their live reads, as a password change does; it also lifts a sign-in
lockout of that username.
"""

from axes.utils import reset as axes_reset
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.shortcuts import render
from django.urls import reverse_lazy

from houses.email_address import hours
from houses.mail_limits import take


class PasswordReset(auth_views.PasswordResetView):
    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"
    success_url = reverse_lazy("password_reset_done")

    def form_valid(self, form):
        client = self.request.META.get("REMOTE_ADDR", "")
        address = form.cleaned_data["email"]
        # Both are counted on every request, whichever is over: a loop over addresses
        # from one client, or at one address from many.
        per_client = take("reset-client", client, settings.PASSWORD_RESETS_PER_CLIENT)
        per_address = take("reset-address", address, settings.PASSWORD_RESETS_PER_ADDRESS)
        if not (per_client and per_address):
            return render(self.request, "registration/password_reset_throttled.html", status=429)
        # Links point where the request came (a host in ALLOWED_HOSTS), as invite links do.
        self.extra_email_context = {"hours": hours(settings.PASSWORD_RESET_TIMEOUT)}
        return super().form_valid(form)


class PasswordResetDone(auth_views.PasswordResetDoneView):
    def get_context_data(self, **kwargs):
        return super().get_context_data(hours=hours(settings.PASSWORD_RESET_TIMEOUT), **kwargs)


class PasswordResetConfirm(auth_views.PasswordResetConfirmView):
    success_url = reverse_lazy("login")

    def form_valid(self, form):
        response = super().form_valid(form)
        # Whoever opened the link holds the mailbox: wrong passwords typed before (by them,
        # or by someone else) no longer pause their sign-in (django-axes).
        axes_reset(username=form.user.get_username())
        messages.success(
            self.request,
            "Your password was reset: sign in with it. Every other session was signed out.",
        )
        return response
