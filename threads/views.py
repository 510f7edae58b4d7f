"""Thread pages. Thin: access through ``houses.access``, one service call, render or redirect."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from houses.access import access_person_thread
from houses.membership import agent_for_user
from houses.principals import person
from houses.sidebar import sidebar_context
from threads.fragments import page_context, window_context
from threads.people import page_people
from threads.reading import ThreadLogMissing
from threads.status_sync import now_ms
from threads.unread import mark_read, read_positions


def viewer(user):
    return person(user, agent_for_user(user))


@login_required
def thread_page(request, thread_id):
    access = access_person_thread(viewer(request.user), thread_id)
    # Where the person had read to, for the page's "New messages" divider; then opening
    # the thread reads it (docs/unread.md).
    was_read = read_positions(request.user, [access.thread.pk]).get(access.thread.pk, 0)
    mark_read(request.user, access.thread)
    try:
        around = request.GET.get("around", "")[:128]
        context = page_context(access, now_ms=now_ms(), around=around, was_read=was_read)
        context |= sidebar_context(access.thread.house, request.user, access.thread.pk)
        context |= private_context(access, request.user, context)
        return render(request, "threads/thread.html", context)
    except ThreadLogMissing as exc:
        context = {"thread": access.thread, "problem": str(exc)}
        return render(request, "threads/missing_log.html", context, status=503)


def private_context(access, user, context: dict) -> dict:
    """Who reads the thread, for its page; in a private thread the compose box offers
    only its members to mention, and runs only to its bots."""
    people = page_people(access, user)
    if access.thread.is_private:
        inside = set(people["member_handles"])
        people["bots"] = [b for b in context["bots"] if b.handle in inside]
        people["mentionable"] = [m for m in context["mentionable"] if m["handle"] in inside]
    return people


@login_required
@require_GET
def thread_window(request, thread_id):
    """A history window for the page's scroller: older (``upto`` a mark, or ``before`` a
    chat) or newer inside a gap (``after`` a mark ``until`` another). docs/history.md."""
    access = access_person_thread(viewer(request.user), thread_id)
    keys = {k: request.GET.get(k, "")[:128] for k in ("upto", "before", "after", "until")}
    try:
        context = window_context(access, **keys)
    except ThreadLogMissing:
        context = None
    if context is None:
        raise Http404
    return render(request, "threads/_window.html", context)


@login_required
@require_POST
def delegate_run(request, thread_id):
    """The page's "delegate a run" form: the same claim and start as ``POST /api/…/runs``."""
    from dispatch import backstage
    from dispatch.runs import RunRefused, claim_run

    access = access_person_thread(viewer(request.user), thread_id)
    handle, task = request.POST.get("agent", "").lstrip("@"), request.POST.get("task", "")
    try:
        claim = claim_run(access.thread, handle=handle, task=task, by=access.principal.agent)
        backstage.start_run(claim)
    except RunRefused as exc:
        messages.error(request, str(exc))
    return redirect("thread", thread_id=thread_id)
