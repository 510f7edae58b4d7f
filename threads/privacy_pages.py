"""The pages' forms for private threads and direct conversations: thin views over
``threads.privacy``, access through ``houses.access``. A change that can't be made comes
back as the page's error message, as the house's other forms do."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from houses.access import access_house, access_person_thread, access_readers
from houses.membership import agent_for_user
from threads.privacy import PrivacyError, add_member, make_private, open_direct, remove_member
from threads.views import viewer

IDS_KEPT = 1_000  # agent ids read from one form, at most (a bigger form is refused whole)


def agent_ids(request, name: str) -> list[str]:
    ids = [i[:32] for i in request.POST.getlist(name)[: IDS_KEPT + 1]]
    if len(ids) > IDS_KEPT:
        raise PrivacyError("That is more people than a thread can have.")
    return ids


@login_required
@require_POST
def direct_form(request, slug):
    """Start, or reopen, the direct conversation with the people ticked (``agent``)."""
    house = access_house(request.user, slug).house
    try:
        others = agent_ids(request, "agent")
        if not others:
            raise PrivacyError("Choose who the message is for.")
        thread, _ = open_direct(house, agent_for_user(request.user), others)
    except PrivacyError as exc:
        messages.error(request, str(exc))
        return redirect("house", slug=slug)
    return redirect("thread", thread_id=thread.pk)


@login_required
@require_POST
def private_form(request, thread_id):
    """Make an open thread private to its changer and the people ticked (``member``)."""
    access = access_person_thread(viewer(request.user), thread_id)
    access_readers(access)
    try:
        make_private(access.thread, access.principal.agent, agent_ids(request, "member"))
    except PrivacyError as exc:
        messages.error(request, str(exc))
    return redirect("thread", thread_id=thread_id)


@login_required
@require_POST
def add_member_form(request, thread_id):
    access = access_person_thread(viewer(request.user), thread_id)
    access_readers(access)
    try:
        for agent_id in agent_ids(request, "agent"):
            add_member(access.thread, agent_id, access.principal.agent)
    except PrivacyError as exc:
        messages.error(request, str(exc))
    return redirect("thread", thread_id=thread_id)


@login_required
@require_POST
def remove_member_form(request, thread_id, agent_id):
    """Remove someone (the starter or an owner), or leave (anyone): then the house page,
    since the thread is no longer theirs to read."""
    access = access_person_thread(viewer(request.user), thread_id)
    access_readers(access, agent_id)
    try:
        remove_member(access.thread, agent_id, access.principal.agent)
    except PrivacyError as exc:
        messages.error(request, str(exc))
        return redirect("thread", thread_id=thread_id)
    if agent_id == access.principal.agent_id:
        messages.success(request, f"You left “{access.thread.title}”.")
        return redirect("house", slug=access.thread.house.slug)
    return redirect("thread", thread_id=thread_id)
