"""Thread pages. Thin: access through ``houses.access``, one service call, render or redirect."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from houses.access import access_person_thread
from houses.membership import agent_for_user
from houses.principals import person
from threads.fragments import page_context
from threads.reading import ThreadLogMissing
from threads.status_sync import now_ms
from threads.unread import mark_read


def viewer(user):
    return person(user, agent_for_user(user))


@login_required
def thread_page(request, thread_id):
    access = access_person_thread(viewer(request.user), thread_id)
    mark_read(request.user, access.thread)  # opening a thread reads it (docs/unread.md)
    try:
        return render(request, "threads/thread.html", page_context(access, now_ms=now_ms()))
    except ThreadLogMissing as exc:
        context = {"thread": access.thread, "problem": str(exc)}
        return render(request, "threads/missing_log.html", context, status=503)


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
