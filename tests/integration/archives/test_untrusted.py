"""An archive is untrusted input: a tampered, traversing, bomb-like or invalid one is
refused with a clear error and nothing is written; an interrupted import resumes or rolls
back."""

import json
import zipfile

import pytest
from django.core.management import CommandError, call_command

from archives import restore
from archives.models import ImportRecord
from archives.restore import restore_archive
from houses.models import House
from tests.integration.archives.seeding import seed_house
from tests.integration.archives.test_round_trip import wipe_server
from threads.models import Thread
from threads.reading import read_entries

pytestmark = pytest.mark.django_db(transaction=True)


def rewrite(src, dst, change) -> None:
    """Copy the zip ``src`` to ``dst`` with ``change(name, data) -> data | None`` applied."""
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for info in a.infolist():
            data = change(info.filename, a.read(info))
            if data is not None:
                b.writestr(info.filename, data)


@pytest.fixture
def archive(tmp_path, files_on_disk):
    seeded = seed_house()
    path = tmp_path / "acme.zip"
    call_command("export_house", "acme", str(path))
    wipe_server(seeded.house, files_on_disk)
    return path


def refused(path, said: str) -> None:
    with pytest.raises(CommandError) as raised:
        call_command("import_house", str(path))
    assert said in str(raised.value)
    assert not House.objects.exists() and not Thread.objects.exists()
    assert not ImportRecord.objects.exists()


def test_a_tampered_archive_is_refused(archive, tmp_path):
    bad = tmp_path / "bad.zip"
    rewrite(
        archive,
        bad,
        lambda n, d: d.replace(b"the budget", b"the BUDGET") if n.startswith("threads/") else d,
    )
    refused(bad, "checksum does not match the manifest")


def test_a_member_not_in_the_manifest_is_refused(archive, tmp_path):
    bad = tmp_path / "bad.zip"
    rewrite(archive, bad, lambda n, d: d)
    with zipfile.ZipFile(bad, "a") as z:
        z.writestr("extra.txt", b"hi")
    refused(bad, "extra.txt: not listed in the manifest")


def test_member_names_that_climb_out_are_refused(archive, tmp_path):
    bad = tmp_path / "bad.zip"
    rewrite(archive, bad, lambda n, d: d)
    with zipfile.ZipFile(bad, "a") as z:
        z.writestr("../../etc/passwd", b"x")
    refused(bad, "not a plain relative path")


def test_a_zip_bomb_is_refused(archive, tmp_path):
    bad = tmp_path / "bad.zip"
    rewrite(archive, bad, lambda n, d: d)
    with zipfile.ZipFile(bad, "a", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("files/bomb", b"\0" * (50 * 1024 * 1024))
    refused(bad, "zip bomb")


def test_an_entry_the_contract_refuses_is_named_by_file_and_line(archive, tmp_path):
    """Even with checksums that match (an archive made by hand), every entry is checked."""
    import hashlib

    bad = tmp_path / "bad.zip"
    target = {}

    def change(name, data):
        if name.startswith("threads/") and name.endswith(".jsonl") and not target:
            lines = data.split(b"\n")
            doc = json.loads(lines[1])
            doc["payload"]["type"] = "user.message"
            lines[1] = json.dumps(doc).encode()
            target["name"] = name
            target["data"] = b"\n".join(lines)
            return target["data"]
        return data

    rewrite(archive, bad, change)
    fixed = tmp_path / "fixed.zip"

    def manifest(name, data):
        if name != "manifest.json":
            return data
        doc = json.loads(data)
        body = target["data"]
        doc["files"][target["name"]] = {
            "sha256": hashlib.sha256(body).hexdigest(),
            "bytes": len(body),
        }
        return json.dumps(doc).encode()

    rewrite(bad, fixed, manifest)
    refused(fixed, f"{target['name']}, line 2:")


def test_an_interrupted_import_resumes_without_duplicates(archive, monkeypatch):
    """Cut off half-way through a thread's log (batches of two entries, the fifth fails):
    running it again appends what is missing once, and the logs are the archive's."""
    from archives import appending
    from threads.recency import RecencyTrackingWriter

    expected = {}
    with zipfile.ZipFile(archive) as z:
        for t in json.loads(z.read("threads.json")):
            lines = z.read(f"threads/{t['id']}.jsonl").decode().splitlines()
            expected[t["id"]] = [json.loads(line)["id"] for line in lines]
    monkeypatch.setattr(appending, "BATCH_ENTRIES", 2)
    real = RecencyTrackingWriter.restore_batch
    calls = {"n": 0}

    def cut_off(self, name, messages, **options):
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("the process died")
        return real(self, name, messages, **options)

    monkeypatch.setattr(RecencyTrackingWriter, "restore_batch", cut_off)
    with pytest.raises(RuntimeError):
        restore_archive(archive)
    assert ImportRecord.objects.get().state == "running"
    monkeypatch.setattr(RecencyTrackingWriter, "restore_batch", real)
    done = restore_archive(archive)
    assert not done.already and Thread.objects.count() == 5
    for thread_id, ids in expected.items():
        assert [e.id for e in read_entries(thread_id)[0]] == ids
    assert ImportRecord.objects.get().state == "done"


def test_an_interrupted_import_rolls_back(archive, monkeypatch):
    def dies(self, house, doc):
        raise RuntimeError("the process died")

    monkeypatch.setattr(restore._Restore, "_thread", dies)
    with pytest.raises(RuntimeError):
        restore_archive(archive)
    assert House.objects.exists()
    call_command("import_house", str(archive), "--abandon")
    assert not House.objects.exists() and not ImportRecord.objects.exists()
    from django.contrib.auth import get_user_model

    assert not get_user_model().objects.exists()  # the placeholders it made went too
