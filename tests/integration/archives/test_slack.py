"""Moving in from Slack: a fixture export imports to the expected entries; a malformed one
is refused naming the file and line, with nothing written."""

import http.server
import threading

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from archives.models import ImportRecord, Placeholder
from attachments.models import Attachment
from houses.models import Agent, House
from tests.integration.archives.slack_fixture import write_export
from tests.integration.attachments.files import png
from threads.entries import Chat, EntryDeleted, EntryEdited, EntryReaction, ThreadMadePrivate
from threads.models import Thread, Visibility
from threads.reading import read_entries

pytestmark = pytest.mark.django_db(transaction=True)


def entries_of(title):
    return read_entries(Thread.objects.get(title=title).id)[0]


def chats(title):
    return [e for e in entries_of(title) if isinstance(e.payload, Chat)]


def test_a_slack_export_becomes_threads_of_ordinary_entries(tmp_path, files_on_disk):
    path = tmp_path / "slack.zip"
    write_export(path)
    call_command("import_slack", str(path), house="Moved in")
    house = House.objects.get(slug="moved-in")
    titles = set(Thread.objects.filter(house=house).values_list("title", flat=True))
    assert titles == {"#general", "#random", "secret-plans", "Direct: Alice, Bob B"}
    alice = Agent.objects.get(handle="alice")
    bob = Agent.objects.get(handle="bob")
    general = chats("#general")
    # Joins are Slack's notices, not messages; the reply stays in its channel, in time order.
    assert [c.payload.text for c in general] == [
        "Hi @bob, see #random and [the doc](https://example.org/doc) <now>",
        "**bold** and ~~gone~~ and `code *stays*`",
        "a reply in the thread",
        "Deployed **v2**",
        "from someone who left",
        "the chart\n📎 [chart.png](https://files.slack.example/F1/chart.png)",
        "This message was deleted.",
    ]
    assert general[0].authorId == alice.id and general[1].authorId == bob.id
    assert (
        general[0].payload.sentAt == 1_700_000_001_000 and general[0].ts > general[0].payload.sentAt
    )
    assert general[0].id == "slack:C1:1700000001.000200"
    log = entries_of("#general")
    edits = [e for e in log if isinstance(e.payload, EntryEdited)]
    assert [(e.payload.entryId, e.authorId) for e in edits] == [(general[1].id, bob.id)]
    reactions = [(e.payload.emoji, e.authorId) for e in log if isinstance(e.payload, EntryReaction)]
    carol = Agent.objects.get(handle="carol")
    assert reactions == [
        ("👍", bob.id),
        ("👍", carol.id),
    ]  # the custom :partyparrot: is not carried
    deleted = [e.payload.entryId for e in log if isinstance(e.payload, EntryDeleted)]
    assert deleted == [general[-1].id]
    bot = Agent.objects.get(house=house, handle="deploybot")
    assert general[3].authorId == bot.id and bot.is_bot and not bot.active
    # Private channels and direct conversations stay private to their members.
    secret = Thread.objects.get(title="secret-plans")
    assert secret.visibility == Visibility.PRIVATE
    direct = Thread.objects.get(title="Direct: Alice, Bob B")
    assert direct.visibility == Visibility.DIRECT
    made = [e for e in entries_of("secret-plans") if isinstance(e.payload, ThreadMadePrivate)]
    assert set(made[0].payload.memberIds) == {alice.id, bob.id}
    assert chats("Direct: Alice, Bob B")[0].payload.text == "psst @alice"
    assert Thread.objects.get(title="#random").archived_at is not None
    # Someone users.json doesn't describe still has a name; Slack's own messages a bot's.
    assert chats("#random")[1].authorId == Agent.objects.get(handle="u9").id
    assert general[-1].authorId == Agent.objects.get(house=house, handle="slackbot").id
    # People are placeholders with what Slack knew; the page shows Slack's time.
    assert Placeholder.objects.count() == 4
    assert get_user_model().objects.get(username="alice").email == "alice@example.org"
    owner = get_user_model().objects.get(username="alice")
    from tests.integration.archives.seeding import client_for

    page = client_for(owner).get(f"/threads/{Thread.objects.get(title='#general').id}/")
    assert page.status_code == 200
    assert 'datetime="2023-11-14T22:13:21Z"' in page.content.decode()
    # No bot owes anyone a reply for history: the thread is not working.
    assert Thread.objects.get(title="#general").status == "idle"


def test_importing_the_same_export_twice_is_a_no_op(tmp_path, files_on_disk):
    path = tmp_path / "slack.zip"
    write_export(path)
    call_command("import_slack", str(path), house="Moved in")
    logs = {t.id: read_entries(t.id)[0] for t in Thread.objects.all()}
    call_command("import_slack", str(path), house="Moved in")
    assert {t.id: read_entries(t.id)[0] for t in Thread.objects.all()} == logs
    assert ImportRecord.objects.get().state == "done"


class _Files(http.server.BaseHTTPRequestHandler):
    body = png(40, 30)
    seen: list = []

    def do_GET(self):
        _Files.seen.append(self.headers.get("Authorization"))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def test_with_a_token_files_are_downloaded_into_the_house(tmp_path, files_on_disk, monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    runner = threading.Thread(target=server.serve_forever, daemon=True)
    runner.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/F1/chart.png"
        path = tmp_path / "slack.zip"
        write_export(path, url)
        monkeypatch.setenv("SLACK_TOKEN_FOR_TEST", "xoxp-test")
        call_command("import_slack", str(path), house="Moved in", token_env="SLACK_TOKEN_FOR_TEST")
    finally:
        server.shutdown()
        server.server_close()
    assert _Files.seen == ["Bearer xoxp-test"]
    chart = [c for c in chats("#general") if c.payload.attachments][0]
    assert chart.payload.text == "the chart"
    (ref,) = chart.payload.attachments
    row = Attachment.objects.get(pk=ref.id)
    assert (row.entry_id, row.content_type, ref.image.w) == (chart.id, "image/png", 40)


@pytest.mark.parametrize(
    ("broken", "said"),
    [
        (
            '[\n {"type": "message", "user": "U1",\n  "text": "x" "ts": "1"}\n]',
            "general/2023-11-15.json, line 3",
        ),
        (
            '[\n {"type": "message", "user": "U1", "text": "x"}\n]',
            "general/2023-11-15.json, line 2",
        ),
        ('[\n {"type": "message", "ts": "yesterday"}\n]', "general/2023-11-15.json"),
    ],
)
def test_a_malformed_export_is_refused_naming_file_and_line(tmp_path, broken, said):
    path = tmp_path / "slack.zip"
    write_export(path, broken=broken)
    with pytest.raises(CommandError) as raised:
        call_command("import_slack", str(path), house="Moved in")
    assert said in str(raised.value)
    assert not House.objects.exists() and not Thread.objects.exists()
    assert not ImportRecord.objects.exists() and not get_user_model().objects.exists()


def test_a_person_who_confirms_the_same_email_claims_their_history(tmp_path, files_on_disk):
    from houses import email_address
    from houses.models import PendingEmail
    from tests.factories import make_user

    path = tmp_path / "slack.zip"
    write_export(path)
    call_command("import_slack", str(path), house="Moved in")
    placeholder = Agent.objects.get(handle="alice")
    real = make_user("alice-real")
    email_address.ask(real, "ALICE@example.org", "http://testserver")
    email_address.confirm(PendingEmail.objects.get(user=real), "http://testserver")
    real.refresh_from_db()
    assert real.agent.id == placeholder.id  # every entry alice wrote in Slack is now hers
    assert real.memberships.filter(house__slug="moved-in").exists()
    assert not Placeholder.objects.filter(user__email__iexact="alice@example.org").exists()
    from tests.integration.archives.seeding import client_for

    secret = Thread.objects.get(title="secret-plans")
    assert client_for(real).get(f"/threads/{secret.id}/").status_code == 200


def test_by_option_a_thread_of_replies_becomes_a_thread_of_its_own(tmp_path, files_on_disk):
    path = tmp_path / "slack.zip"
    write_export(path)
    call_command("import_slack", str(path), house="Moved in", replies_as_threads=True)
    general = Thread.objects.get(title="#general")
    child = Thread.objects.get(parent=general)
    assert child.title == "#general · *bold* and ~gone~ and `code *stays*`"
    texts = [c.payload.text for c in chats(child.title)]
    assert texts == ["a reply in the thread"]
    assert "a reply in the thread" not in [c.payload.text for c in chats("#general")]
    # The reply keeps the id it has without the option: Slack's channel and time.
    assert chats(child.title)[0].id == "slack:C1:1700000003.000400"
    created = entries_of(child.title)[0]
    assert created.payload.parentThreadId == general.id


def test_an_interrupted_slack_import_resumes_without_duplicates(
    tmp_path, files_on_disk, monkeypatch
):
    from archives.slack import importer

    path = tmp_path / "slack.zip"
    write_export(path)
    real = importer._Import._conversation
    calls = {"n": 0}

    def dies_on_second(self, house, c, client):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("the process died")
        return real(self, house, c, client)

    monkeypatch.setattr(importer._Import, "_conversation", dies_on_second)
    with pytest.raises(RuntimeError):
        call_command("import_slack", str(path), house="Moved in")
    monkeypatch.setattr(importer._Import, "_conversation", real)
    call_command("import_slack", str(path), house="Moved in")
    assert Thread.objects.count() == 4
    for thread in Thread.objects.all():
        entries = read_entries(thread.id)[0]
        assert len({e.id for e in entries}) == len(entries)
    assert len(chats("#general")) == 7


def test_imported_titles_are_one_line_without_hidden_characters(
    tmp_path, files_on_disk, monkeypatch
):
    """A crafted export's channel name or display name (the direct conversation's title)
    with a line break or a bidi override becomes a title as arbe's own are (houses.names)."""
    from tests.integration.archives import slack_fixture

    users = [dict(u) for u in slack_fixture.USERS]
    users[1] = users[1] | {"profile": {"real_name": "Bob\u202e B\r\nBcc: all@example.org"}}
    groups = [slack_fixture.GROUPS[0] | {"name": "secret\u2028plans\x85now"}]
    monkeypatch.setattr(slack_fixture, "USERS", users)
    monkeypatch.setattr(slack_fixture, "GROUPS", groups)
    path = tmp_path / "slack.zip"
    write_export(path)
    call_command("import_slack", str(path), house="Moved in")
    titles = set(Thread.objects.values_list("title", flat=True))
    assert "secret plans now" in titles
    assert "Direct: Alice, Bob B Bcc: all@example.org" in titles
