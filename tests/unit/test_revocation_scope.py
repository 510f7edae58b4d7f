"""Which open reads an ``access.revoked`` event ends (``houses.revocation.ends``)."""

import pytest

from houses.revocation import NO_ACCESS, SIGNED_OUT, Reader, ends, tag

SESSION = Reader(house=1, session=tag("key-a"), session_hash=tag("hash-old"))
OTHER_SESSION = Reader(house=1, session=tag("key-b"), session_hash=tag("hash-old"))
OTHER_HOUSE = Reader(house=2, session=tag("key-a"), session_hash=tag("hash-old"))
TOKEN = Reader(house=1, token=7)
OTHER_TOKEN = Reader(house=1, token=8)
READERS = {
    "session": SESSION,
    "other session": OTHER_SESSION,
    "other house": OTHER_HOUSE,
    "token": TOKEN,
    "other token": OTHER_TOKEN,
}


def event(code: int, **scope) -> dict:
    return {"type": "access.revoked", "code": code, **scope}


@pytest.mark.parametrize(
    ("what", "sent", "ended"),
    [
        ("deactivation", event(SIGNED_OUT), set(READERS)),
        ("sign-out", event(SIGNED_OUT, session=tag("key-a")), {"session", "other house"}),
        ("removal", event(NO_ACCESS, house=1), set(READERS) - {"other house"}),
        ("token", event(SIGNED_OUT, token=7), {"token"}),
        (
            "new password",
            event(SIGNED_OUT, password=tag("hash-new")),
            {"session", "other session", "other house"},
        ),
        ("password kept by this session", event(SIGNED_OUT, password=tag("hash-old")), set()),
    ],
)
def test_an_event_ends_exactly_the_reads_it_covers(what, sent, ended):
    assert {name for name, reader in READERS.items() if ends(sent, reader)} == ended, what


def test_tags_name_secrets_without_showing_them():
    assert tag("key-a") == tag("key-a") != tag("key-b")
    assert "key-a" not in tag("key-a")
    assert tag(None) is None and tag("") is None
