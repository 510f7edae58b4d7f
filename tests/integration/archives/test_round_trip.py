"""Export a house, restore it on an empty server, and compare what everyone sees: the
pages, /now, search, unread counts and files must be equal (on SQLite with the embedded
stream server, and on PostgreSQL with the reference server under tests.peers.stack)."""

import shutil

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from archives.models import ImportRecord, Placeholder
from archives.restore import restore_archive
from houses.house_log import house_stream_name
from houses.models import House
from search.models import SearchDoc
from streams.client import service_client
from tests.integration.archives.seeding import seed_house
from tests.integration.archives.snapshot import differences, snapshot
from threads.models import EntryLocation, Thread
from threads.reading import read_entries
from threads.recency import throttle

pytestmark = pytest.mark.django_db(transaction=True)


def wipe_server(house: House, files_dir) -> None:
    """As if the archive were carried to a server that never had the house or its people:
    the rows, the people, the streams and the stored files all go."""
    streams = [t.stream_name for t in Thread.objects.filter(house=house)]
    streams.append(house_stream_name(house.id))
    users = list(get_user_model().objects.filter(memberships__house=house))
    users += list(get_user_model().objects.filter(username="fred"))  # left the house
    house.delete()
    for user in users:
        user.delete()
    with service_client() as client:
        for name in streams:
            client.delete(name)
    shutil.rmtree(files_dir, ignore_errors=True)


def test_a_restored_house_looks_and_searches_like_the_original(files_on_disk, tmp_path):
    seeded = seed_house()
    people = [seeded.owner, seeded.member, seeded.guest]
    names = [u.get_username() for u in people]
    logs = {t.id: read_entries(t.id)[0] for t in seeded.threads}
    throttle.flush_all()  # the rows' recency as it will be once its trailing writes land
    path = tmp_path / "acme.zip"
    call_command("export_house", "acme", str(path))
    # After the export: looking at pages reads them, and the archive carries read positions.
    before = snapshot(people, "acme")

    wipe_server(seeded.house, files_on_disk)
    assert not Thread.objects.exists() and not SearchDoc.objects.exists()
    call_command("import_house", str(path))

    User = get_user_model()
    restored = [User.objects.get(username=n) for n in names]
    # The same entries, ids and times, in the same order.
    for thread_id, entries in logs.items():
        assert read_entries(thread_id)[0] == entries
    diff = differences(before, snapshot(restored, "acme"))
    assert diff == [], "\n\n".join(diff)
    # Nobody here had these people: they are placeholders, with the emails they had; the
    # one who left is one too, in no house, so their message keeps their name.
    assert Placeholder.objects.count() == 4
    fred = User.objects.get(username="fred")
    assert not fred.memberships.exists() and fred.agent.display_name == "fred"
    assert restored[0].email == "olive@example.org" and not restored[0].has_usable_password()
    assert ImportRecord.objects.get().state == "done"


def test_importing_the_same_archive_twice_duplicates_nothing(files_on_disk, tmp_path):
    seeded = seed_house()
    path = tmp_path / "acme.zip"
    call_command("export_house", "acme", str(path))
    wipe_server(seeded.house, files_on_disk)
    restore_archive(path)
    counts = (Thread.objects.count(), EntryLocation.objects.count(), SearchDoc.objects.count())
    logs = {t.id: read_entries(t.id)[0] for t in Thread.objects.all()}
    again = restore_archive(path)
    assert again.already
    assert (
        Thread.objects.count(),
        EntryLocation.objects.count(),
        SearchDoc.objects.count(),
    ) == counts
    assert {t.id: read_entries(t.id)[0] for t in Thread.objects.all()} == logs


def test_a_copy_on_the_same_server_gets_new_ids_and_consistent_entries(files_on_disk, tmp_path):
    """Restored where the original still lives: its threads and files take new ids, and the
    entries that name them (a run's report, a message's files) name the copies."""
    from threads.entries import Chat, ThreadChildFinished

    seeded = seed_house()
    path = tmp_path / "acme.zip"
    call_command("export_house", "acme", str(path))
    call_command("import_house", str(path), "--slug", "acme-copy")
    originals = {t.title: t for t in Thread.objects.filter(house__slug="acme")}
    copies = {t.title: t for t in Thread.objects.filter(house__slug="acme-copy")}
    assert set(copies) == set(originals)
    assert not {t.id for t in copies.values()} & {t.id for t in originals.values()}
    plans = read_entries(copies["Plans"].id)[0]
    assert [e.id for e in plans] == [e.id for e in read_entries(originals["Plans"].id)[0]]
    report = next(e for e in plans if isinstance(e.payload, ThreadChildFinished))
    assert report.payload.childThreadId == copies["Run: tidy the docs"].id
    assert copies["Run: tidy the docs"].parent_id == copies["Plans"].id
    (chart,) = [e for e in plans if isinstance(e.payload, Chat) and e.payload.attachments]
    from attachments.models import Attachment

    row = Attachment.objects.get(pk=chart.payload.attachments[0].id)
    assert row.house.slug == "acme-copy" and row.entry_id == chart.id
    # The same people, not placeholders: they were here already.
    assert Placeholder.objects.count() == 0
    assert copies["Owners only"].visibility == "private"
    from tests.integration.archives.seeding import client_for

    member, guest = client_for(seeded.member), client_for(seeded.guest)
    assert member.get(f"/threads/{copies['Owners only'].id}/").status_code == 200
    assert guest.get(f"/threads/{copies['Owners only'].id}/").status_code == 404
    file_url = f"/attachments/{row.thread_id}/{row.id}/file"
    assert member.get(file_url).status_code == 200
    hits = member.get("/api/search?q=roadmap&house=acme-copy").json()["results"]
    assert [h["threadId"] for h in hits] == [copies["Plans"].id]


def test_a_title_stored_before_titles_were_one_line_is_restored_as_one(files_on_disk, tmp_path):
    """An archive carries a thread row's title as it was: one with a line break or a bidi
    override (stored before ``houses.names.clean_title``) comes back on one line."""
    seed_house()
    Thread.objects.filter(house__slug="acme", title="Plans").update(
        title="Plans\r\nBcc: all@example.org\u202e"
    )
    path = tmp_path / "acme.zip"
    call_command("export_house", "acme", str(path))
    call_command("import_house", str(path), "--slug", "acme-copy")
    titles = set(Thread.objects.filter(house__slug="acme-copy").values_list("title", flat=True))
    assert "Plans Bcc: all@example.org" in titles
    assert not any("\n" in t or "\r" in t or "\u202e" in t for t in titles)
