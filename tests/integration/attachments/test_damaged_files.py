"""A stored file that no longer matches its row (a truncated write, a damaged disk, an object
replaced in the bucket) is answered with an error at once, and logged, on the filesystem and
on S3: a response promising the recorded length and sending less leaves the client waiting."""

import logging

import pytest

from attachments import storage
from attachments.models import Attachment
from tests.integration.attachments import files
from tests.integration.attachments.test_attachments import file_url, post_with, upload

pytestmark = pytest.mark.django_db(transaction=True)


def replace_stored(key: str, data: bytes) -> None:
    storage.delete(key)
    assert storage.save(key, data) == key


@pytest.mark.parametrize("damage", [lambda b: b[: len(b) // 2], lambda b: b + b"extra"])
def test_a_stored_file_of_another_size_is_an_error_not_a_hang(world, storage_kind, damage, caplog):
    author = world.client_for(world.author)
    a = upload(author, world.thread, files.PDF, "notes.pdf").json()["attachment"]
    assert post_with(author, world.thread, [a["id"]]).status_code == 201
    row = Attachment.objects.get(id=a["id"])
    replace_stored(row.key, damage(files.PDF))

    with caplog.at_level(logging.ERROR, logger="attachments.views"):
        response = author.get(file_url(world.thread, a["id"]))
    assert response.status_code == 500
    assert b"damaged" in response.content
    assert row.key.encode() not in response.content  # no server path on the page
    logged = [r for r in caplog.records if r.name == "attachments.views"]
    assert logged and a["id"] in logged[0].getMessage()
    assert str(row.size) in logged[0].getMessage()


def test_an_intact_file_is_served_with_its_length(world, files_on_disk):
    author = world.client_for(world.author)
    a = upload(author, world.thread, files.PDF, "notes.pdf").json()["attachment"]
    assert post_with(author, world.thread, [a["id"]]).status_code == 201
    response = author.get(file_url(world.thread, a["id"]))
    assert response.status_code == 200
    assert response["Content-Length"] == str(len(files.PDF))
    assert b"".join(response.streaming_content) == files.PDF
