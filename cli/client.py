"""The arbe HTTP API as the ``arbe`` command uses it: a bearer token, typed rows, plain errors.

No Django here: the command runs anywhere Python and the project's packages are,
and talks to a running server only over HTTP. Thread streams are read through the
scoped client (``streams.scoped``), which never holds the service secret.
"""

from __future__ import annotations

import os
import zoneinfo
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec

from streams.scoped import ScopedStreamClient
from threads.narration import Name, Names
from threads.now import FoldState, ThreadNow

DEFAULT_URL = "http://127.0.0.1:8000"
MAX_AUTHORS = 200  # ids per members call (the server's limit)


class CliError(Exception):
    """Something the person at the terminal can act on; printed without a traceback."""


class HouseRow(msgspec.Struct):
    slug: str
    name: str
    status: str
    counts: dict[str, int]
    speaker: dict | None = None


class ThreadRow(msgspec.Struct):
    id: str
    house: str
    title: str
    status: str
    statusMessage: str = ""
    lastEntryTs: int | None = None
    parentId: str | None = None
    archived: bool = False


class MemberRow(msgspec.Struct):
    agentId: str
    handle: str
    username: str
    displayName: str = ""  # what pages call them (older servers sent only the username)


class BotRow(msgspec.Struct):
    agentId: str
    handle: str
    displayName: str
    active: bool = True


class Houses(msgspec.Struct):
    houses: list[HouseRow]


class Threads(msgspec.Struct):
    threads: list[ThreadRow]
    next: str | None = None  # the cursor of the page after this one


class OneThread(msgspec.Struct):
    thread: ThreadRow


class FormerRow(msgspec.Struct):
    """Someone who wrote in the house and has left it, or a retired bot."""

    agentId: str
    handle: str
    displayName: str
    username: str = ""  # people only
    bot: bool = False


class People(msgspec.Struct):
    members: list[MemberRow]
    bots: list[BotRow]
    former: list[FormerRow] = []


class StatusRow(msgspec.Struct):
    state: str
    message: str = ""


class Total(msgspec.Struct):
    totalTokens: int = 0
    costUsd: float = 0.0


class NowAnswer(msgspec.Struct):
    now: ThreadNow
    offset: str
    status: StatusRow
    fold: FoldState = msgspec.field(default_factory=FoldState)  # to go on folding from offset
    total: Total = msgspec.field(default_factory=Total)  # the thread's spend, all replies


class HitHouse(msgspec.Struct):
    slug: str
    name: str


class HitAuthor(msgspec.Struct):
    handle: str
    displayName: str
    username: str = ""  # people only
    bot: bool = False


class Hit(msgspec.Struct):
    entryId: str
    threadId: str
    threadTitle: str
    house: HitHouse
    author: HitAuthor
    ts: int
    snippet: str  # HTML: escaped text, matches in <mark>


class SearchPage(msgspec.Struct):
    results: list[Hit]
    next: str | None = None


class InboxAuthor(msgspec.Struct):
    handle: str
    displayName: str
    bot: bool = False


class InboxItem(msgspec.Struct):
    entryId: str
    kind: str
    threadId: str
    threadTitle: str
    house: HitHouse
    author: InboxAuthor
    text: str
    ts: int
    unread: bool


class InboxPage(msgspec.Struct):
    items: list[InboxItem]
    unread: int = 0
    next: str | None = None


class Problem(msgspec.Struct):
    error: str = ""


def local_zone(environ: Mapping[str, str] = os.environ) -> str:
    """This machine's IANA zone name: ``TZ`` if set, else where /etc/localtime points;
    UTC when neither says (the server refuses a name it doesn't know)."""
    name = (environ.get("TZ") or "").removeprefix(":")
    if not name:
        try:
            name = os.path.realpath("/etc/localtime").split("zoneinfo/", 1)[1]
        except (IndexError, OSError):
            name = ""
    try:
        zoneinfo.ZoneInfo(name)  # a POSIX rule like "EST5EDT,M3.2.0" is no IANA name
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return "UTC"
    return name


@dataclass(frozen=True)
class Settings:
    url: str
    token: str
    zone: str = "UTC"  # sent with searches: "today" is the person's day

    @classmethod
    def resolve(cls, url: str | None, token: str | None, environ: Mapping[str, str] = os.environ):
        """Flags first, then ``ARBE_URL`` / ``ARBE_TOKEN``; a token is required."""
        url = (url or environ.get("ARBE_URL") or DEFAULT_URL).rstrip("/")
        token = token or environ.get("ARBE_TOKEN") or ""
        if not token:
            raise CliError(f"No API token. Make one at {url}/tokens/ and set ARBE_TOKEN.")
        return cls(url, token, local_zone(environ))


class Api:
    """``transports`` makes each client's transport (tests pass in-process ones); by
    default each talks HTTP over its own connections."""

    def __init__(self, settings: Settings, transports: Callable[[], Any] | None = None):
        self.settings = settings
        self.transports = transports or (lambda: None)
        self.http = httpx.Client(
            base_url=settings.url,
            headers={"Authorization": f"Bearer {settings.token}"},
            transport=self.transports(),
            timeout=30,
        )

    def close(self) -> None:
        self.http.close()

    def call(self, method: str, path: str, kind: type | None = None, **options):
        try:
            response = self.http.request(method, path, **options)
        except httpx.TransportError as exc:
            raise CliError(f"Cannot reach {self.settings.url}: {exc}") from None
        check(response)
        return msgspec.json.decode(response.content, type=kind) if kind else None

    def houses(self) -> list[HouseRow]:
        return self.call("GET", "/api/houses", Houses).houses

    def threads(self, house: str | None = None) -> Iterator[ThreadRow]:
        """Every thread, newest activity first, following the list's cursor page by page."""
        params = {"house": house} if house else {}
        while True:
            page = self.call("GET", "/api/threads", Threads, params=params)
            yield from page.threads
            if not page.next:
                return
            params = params | {"cursor": page.next}

    def thread(self, thread_id: str) -> ThreadRow:
        return self.call("GET", f"/api/threads/{thread_id}", OneThread).thread

    def names(self, house: str, authors: Iterable[str | None] = ()) -> Names:
        """The house's people and bots, and those of ``authors`` (ids from its entries) who
        have left it since: a removed member's messages keep their name."""
        authors = sorted({a for a in authors if a})
        names = Names()
        for start in range(0, max(len(authors), 1), MAX_AUTHORS):
            params = {"authors": ",".join(authors[start : start + MAX_AUTHORS])} if authors else {}
            people = self.call("GET", f"/api/houses/{house}/members", People, params=params)
            names.update(
                (m.agentId, Name(m.displayName or m.username, m.handle)) for m in people.members
            )
            names.update(
                (b.agentId, Name(b.displayName, b.handle, True, b.active)) for b in people.bots
            )
            names.update(
                (f.agentId, Name(f.displayName or f.username, f.handle, f.bot, not f.bot))
                for f in people.former
            )
        return names

    def new_thread(self, house: str, title: str) -> ThreadRow:
        return self.call("POST", f"/api/houses/{house}/threads", OneThread, json={"title": title})

    def now(self, thread_id: str) -> NowAnswer:
        return self.call("GET", f"/api/threads/{thread_id}/now", NowAnswer)

    def delete(self, thread_id: str, entry_id: str) -> None:
        self.call("DELETE", f"/api/threads/{thread_id}/entries/{entry_id}")

    def edit(self, thread_id: str, entry_id: str, text: str) -> None:
        self.call("PATCH", f"/api/threads/{thread_id}/entries/{entry_id}", json={"text": text})

    def run(self, thread_id: str, agent: str, task: str) -> dict:
        body = {"agent": agent, "task": task}
        return self.call("POST", f"/api/threads/{thread_id}/runs", dict, json=body)["run"]

    def search(
        self, q: str, house: str | None = None, sort: str = "newest", cursor: str | None = None
    ) -> SearchPage:
        params = {"q": q, "sort": sort, "limit": 50, "tz": self.settings.zone}
        params |= {"house": house} if house else {}
        params |= {"cursor": cursor} if cursor else {}
        return self.call("GET", "/api/search", SearchPage, params=params)

    def inbox(self, cursor: str | None = None) -> InboxPage:
        params = {"limit": 50} | ({"cursor": cursor} if cursor else {})
        return self.call("GET", "/api/inbox", InboxPage, params=params)

    def inbox_read(self) -> int:
        return self.call("POST", "/api/inbox/read", dict)["marked"]

    def scoped(self, thread_id: str) -> ScopedStreamClient:
        return ScopedStreamClient(
            self.settings.url, thread_id, token=self.settings.token, transport=self.transports()
        )


def check(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    if response.status_code == 401:
        raise CliError("The server refused the token (revoked, or not an arbe token?).")
    if response.status_code == 404:
        raise CliError("Not found, or not in a house you belong to.")
    try:
        text = msgspec.json.decode(response.content, type=Problem).error
    except msgspec.DecodeError:
        text = ""
    raise CliError(text or f"The server answered {response.status_code}.")
