"""House pages. Thin: access, one service call, render or redirect."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from arbe_lib.concurrency import in_thread
from dispatch.botcheck import check_bot
from dispatch.conversation import ensure_agent_dir
from houses import bot_choices
from houses.access import access_house, access_owned_bot, access_owned_house
from houses.forms import (
    INVOLVEMENT_WORDS,
    AddBotForm,
    AddMemberForm,
    BotInvolvementForm,
    InviteForm,
    NewThreadForm,
)
from houses.fragments import list_context, page_facts
from houses.home import home_context
from houses.invites import live_invites
from houses.membership import (
    HandleTaken,
    LastOwnerError,
    add_bot,
    add_member,
    agent_for_user,
    configure_bot,
    remove_member,
    retire_bot,
)
from houses.sidebar import houses_block, rows_page, sidebar_context
from houses.tokens import BadTokenName, issue_token, revoke_token, tokens_of
from threads.lifecycle import create_thread
from threads.paging import BadCursor
from threads.people import house_people
from threads.privacy import PrivacyError, start_private
from threads.privacy_pages import agent_ids


@login_required
def home(request):
    from houses.founding import may_create

    context = home_context(request.user) | {"may_create_house": may_create(request.user)}
    return render(request, "houses/home.html", context)


@login_required
def house_page(request, slug):
    access = access_house(request.user, slug)
    # Six queries whatever the house's size: session, user, membership, these facts, and
    # the list's page of threads with read positions and its names (tests hold the budget).
    facts = page_facts(access.house, request.user)
    context = {
        "house": access.house,
        "membership": access.membership,
        "form": NewThreadForm(),
        "has_board": facts.has_board,
        "me_name": facts.me_name,
        "muted": facts.muted,
        "people": house_people(access.house, request.user),  # to message, or to read with
    }
    context |= list_context(access.house, request.user, total=facts.unread)
    context |= sidebar_context(access.house, request.user)
    return render(request, "houses/house.html", context)


@login_required
@require_GET
def sidebar_more(request, slug):
    """The sidebar's next page of threads (its "More threads" button)."""
    access = access_house(request.user, slug)
    current = request.GET.get("current", "")[:16]
    try:
        context = rows_page(access.house.pk, request.user, current, request.GET.get("after", ""))
    except BadCursor:
        raise Http404 from None
    context |= {"side_house": access.house, "side_current": current}
    if request.GET.get("fresh"):  # a socket that reconnected: the whole sidebar, out of band
        context |= houses_block(request.user, access.house.pk) | {"oob": True}
        return render(request, "houses/_side_fresh.html", context)
    return render(request, "houses/_side_page.html", context)


@login_required
@require_GET
def more_threads(request, slug):
    """The next page of the house's thread list, for the page's "more" row (newest first)."""
    access = access_house(request.user, slug)
    try:
        context = list_context(access.house, request.user, request.GET.get("after", ""))
    except BadCursor:
        raise Http404 from None
    return render(request, "houses/_thread_more.html", context)


@login_required
@require_POST
def new_thread(request, slug):
    access = access_house(request.user, slug)
    form = NewThreadForm(request.POST)
    if form.is_valid():
        title, by = form.cleaned_data["title"], agent_for_user(request.user)
        if request.POST.get("private"):  # only the starter and the people ticked read it
            try:
                members = agent_ids(request, "member")
                thread = start_private(access.house, title, by, members)
            except PrivacyError as exc:
                messages.error(request, str(exc))
                return redirect("house", slug=slug)
        else:
            thread = create_thread(house=access.house, title=title, by=by)
        return redirect("thread", thread_id=thread.id)  # the next thing is its first message
    problem = next((e for e in form.errors.get("title", []) if "characters (" in e), None)
    messages.error(request, problem or "A thread needs a title (up to 200 characters).")
    return redirect("house", slug=slug)


@login_required
def members_page(request, slug):
    access = access_owned_house(request.user, slug)
    house = access.house
    agent_dir = ensure_agent_dir()
    memberships = list(house.memberships.select_related("user__agent").order_by("user__username"))
    return render(
        request,
        "houses/members.html",
        {
            "providers": bot_choices.provider_choices(agent_dir),
            "provider_data": bot_choices.form_data(agent_dir),
            "key_rule": bot_choices.key_rule(),
            "demo_bot": bot_choices.demo_bot_offered(house, agent_dir) and bot_choices.DEMO_BOT,
            "house": house,
            "memberships": memberships,
            # The last owner can't be removed (houses.membership): no button offers it.
            "last_owner": sum(m.is_owner for m in memberships) == 1,
            "bots": house.bots.filter(active=True).order_by("handle"),
            "member_form": AddMemberForm(),
            "bot_form": AddBotForm(),
            "involvements": INVOLVEMENT_WORDS,
            "invites": live_invites(house),  # invite links (houses.joining)
            "invite_form": InviteForm(),
        },
    )


@login_required
@require_POST
def add_member_form(request, slug):
    house = access_owned_house(request.user, slug).house
    form = AddMemberForm(request.POST)
    user = None
    if form.is_valid():
        user = get_user_model().objects.filter(username=form.cleaned_data["username"]).first()
    if user is None:
        messages.error(request, "No account has that username.")
    else:
        try:
            add_member(house, user, form.cleaned_data["role"], by=agent_for_user(request.user))
        except (LastOwnerError, HandleTaken) as exc:
            messages.error(request, str(exc))
    return redirect("members", slug=slug)


@login_required
@require_POST
def remove_member_form(request, slug, pk):
    house = access_owned_house(request.user, slug).house
    try:
        remove_member(get_object_or_404(house.memberships, pk=pk), by=agent_for_user(request.user))
    except LastOwnerError as exc:
        messages.error(request, str(exc))
    return redirect("members", slug=slug)


@login_required
@require_POST
def add_bot_form(request, slug):
    house = access_owned_house(request.user, slug).house
    form = AddBotForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            add_bot(house, by=agent_for_user(request.user), **data)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
    else:
        messages.error(request, "A bot's handle is 1–32 lower-case letters, digits, - or _.")
    return redirect("members", slug=slug)


@login_required
@require_POST
def add_demo_bot_form(request, slug):
    """The demo house's bot, in one click, for a house that has none yet."""
    house = access_owned_house(request.user, slug).house
    if not bot_choices.demo_bot_offered(house, ensure_agent_dir()):
        messages.error(request, "This house has a bot already; add another with the form.")
        return redirect("members", slug=slug)
    try:
        bot = add_bot(house, by=agent_for_user(request.user), **bot_choices.DEMO_BOT)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"@{bot.handle} is here: mention it in any thread.")
    return redirect("members", slug=slug)


@login_required
@require_POST
def bot_involvement_form(request, slug, handle):
    bot = access_owned_bot(request.user, slug, handle)
    form = BotInvolvementForm(request.POST)
    if form.is_valid():
        configure_bot(bot, involvement=form.cleaned_data["involvement"])
    return redirect("members", slug=slug)


@login_required
@require_POST
async def check_bot_form(request, slug, handle):
    """A one-token call through Pi; the result is shown on the members page."""
    bot = await in_thread(access_owned_bot, await request.auser(), slug, handle)
    result = await check_bot(bot)
    (messages.success if result.ok else messages.error)(request, result.text)
    return redirect("members", slug=slug)


@login_required
@require_POST
def retire_bot_form(request, slug, handle):
    house = access_owned_house(request.user, slug).house
    retire_bot(
        get_object_or_404(house.bots, handle=handle, active=True), by=agent_for_user(request.user)
    )
    return redirect("members", slug=slug)


@login_required
def tokens_page(request):
    return render(request, "houses/tokens.html", {"tokens": tokens_of(request.user)})


@login_required
@require_POST
def new_token(request):
    """Answers with the page itself: the raw token is in this response and nowhere else."""
    try:
        _, raw = issue_token(request.user, request.POST.get("name", ""))
    except BadTokenName as exc:
        messages.error(request, str(exc))
        return redirect("tokens")
    context = {"tokens": tokens_of(request.user), "raw_token": raw}
    return render(request, "houses/tokens.html", context, status=201)


@login_required
@require_POST
def revoke_token_form(request, pk):
    revoke_token(request.user, pk)
    return redirect("tokens")
