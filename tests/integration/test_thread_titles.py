"""Thread titles are one line, as names are: line breaks become spaces, bidi overrides and
invisible characters are refused. A title stored before that still reaches an email's
subject on one line, and a mention email that can never be built fails once, for good."""

import json

import pytest
from django.core import mail

from notify.models import Notice
from notify.worker import Notifier
from tests.integration.notify.test_notify import post
from threads.entries import ThreadCreated, ThreadRenamed
from threads.models import Thread
from threads.reading import read_entries

pytestmark = pytest.mark.django_db(transaction=True)

BREAKS = {
    "crlf": ("Plans\r\nBcc: evil@example.test", "Plans Bcc: evil@example.test"),
    "lf": ("Plans\nfor May", "Plans for May"),
    "nel": ("Plans\x85for May", "Plans for May"),
    "line-separator": ("Plans\u2028for May", "Plans for May"),
    "paragraph-separator": ("Plans\u2029for May", "Plans for May"),
    "tabs-and-runs": ("  Plans\t\t for   May ", "Plans for May"),
}
HIDDEN = {
    "rlo": "evil\u202egnp.exe",
    "lri": "a\u2066b",
    "zero-width-space": "Pla\u200bns",
    "zero-width-joiner": "Pla\u200dns",
    "bom": "\ufeffPlans",
    "hangul-filler": "Plans\u3164",
    "nul": "Plans\x00",
    "bell": "Plans\x07",
}


def create(client, house, title):
    return client.post(
        f"/api/houses/{house.slug}/threads",
        json.dumps({"title": title}),
        content_type="application/json",
    )


def rename(client, thread, title):
    return client.patch(
        f"/api/threads/{thread.id}", json.dumps({"title": title}), content_type="application/json"
    )


@pytest.mark.parametrize("case", list(BREAKS))
def test_line_breaks_in_a_title_become_one_space(world, case):
    raw, stored = BREAKS[case]
    owner = world.client_for(world.owner)
    made = create(owner, world.house, raw)
    assert made.status_code == 201, made.content
    thread = Thread.objects.get(pk=made.json()["thread"]["id"])
    assert thread.title == stored
    [created] = [e.payload for e in read_entries(thread.stream_name)[0]]
    assert isinstance(created, ThreadCreated) and created.title == stored
    assert rename(owner, world.thread, raw).status_code == 200
    assert Thread.objects.get(pk=world.thread.pk).title == stored
    last = read_entries(world.thread.stream_name)[0][-1].payload
    assert isinstance(last, ThreadRenamed) and last.title == stored


@pytest.mark.parametrize("case", list(HIDDEN))
def test_a_title_with_hidden_characters_is_refused(world, case):
    owner = world.client_for(world.owner)
    made = create(owner, world.house, HIDDEN[case])
    assert made.status_code == 400, made.content
    assert made.json()["error"].startswith("title:")
    renamed = rename(owner, world.thread, HIDDEN[case])
    assert renamed.status_code == 400, renamed.content
    assert Thread.objects.get(pk=world.thread.pk).title == world.thread.title
    before = Thread.objects.count()
    page = owner.post(f"/houses/{world.house.slug}/threads/new", {"title": HIDDEN[case]})
    assert page.status_code == 302 and page["Location"] == f"/houses/{world.house.slug}/"
    assert Thread.objects.count() == before


def test_a_title_of_only_breaks_is_blank(world):
    assert create(world.client_for(world.owner), world.house, "\r\n\u2028").status_code == 400


@pytest.fixture
def mia_by_email(world, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NOTIFY_EMAIL_DELAY_S = 0
    world.member.email = "mia@example.test"
    world.member.save()


def test_an_old_title_with_line_breaks_reaches_the_subject_on_one_line(world, mia_by_email):
    # Stored before titles were checked: only the row can hold it now.
    Thread.objects.filter(pk=world.thread.pk).update(
        title="Plans\r\nBcc: evil@example.test\u2028\u202eeno"
    )
    post(world.client_for(world.owner), world.thread, "@mia look at this")
    Notifier("engine-a").tick()
    [sent] = mail.outbox
    assert sent.subject == "olive mentioned you in “Plans Bcc: evil@example.test eno”"
    message = sent.message()
    assert message["Bcc"] is None and "evil" not in (message["To"] or "")
    assert Notice.objects.get(channel="email").state == Notice.State.SENT


def test_an_email_that_can_never_be_built_fails_once_for_good(world, mia_by_email):
    # An address stored before it was checked: Django refuses the header every time.
    type(world.member).objects.filter(pk=world.member.pk).update(
        email="mia@example.test\nBcc: evil@example.test"
    )
    post(world.client_for(world.owner), world.thread, "@mia look at this")
    notifier = Notifier("engine-a")
    notifier.tick()
    notice = Notice.objects.get(channel="email")
    assert notice.state == Notice.State.FAILED
    Notice.objects.filter(pk=notice.pk).update(due_at=notice.created_at)  # long past due
    notifier.tick()
    assert Notice.objects.get(pk=notice.pk).state == Notice.State.FAILED
    assert mail.outbox == []
