"""``arbe``: houses and threads from a terminal, over HTTP with your API token.

    export ARBE_URL=http://127.0.0.1:8000 ARBE_TOKEN=arbe_…   # a token from /tokens/
    arbe houses
    arbe threads demo
    arbe new demo "Release notes"
    arbe post THREAD "@helper draft them"     # or text on stdin
    arbe follow THREAD                        # history, then live; Ctrl-C stops
    arbe read THREAD --from OFFSET            # what came after an offset, then exit
    arbe thread now THREAD [--follow]         # the current view (short: arbe now)
    arbe thread entries read THREAD [--from OFFSET] [--raw]
                                              # until nothing is working or waiting
    arbe edit THREAD ENTRY "new text"        # your own message (or text on stdin)
    arbe delete THREAD ENTRY
    arbe run THREAD @helper "write the tests"
    arbe dm @mia @helper [--house SLUG]        # your direct conversation with them
    arbe search deploy -rollback from:@ari    # every match, newest first (--house SLUG)

Offsets are the server's, printed and taken back as they are.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Mapping

import msgspec

from cli import direct
from cli.client import Api, CliError, Settings
from cli.live import follow_now, read_until_quiet
from cli.render import (
    AGENT_ID,
    Output,
    caught_up,
    decoded,
    hit_line,
    house_line,
    inbox_line,
    now_lines,
    print_entries,
    thread_line,
)
from streams import errors
from threads.narration import Names


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="arbe", description="Houses and threads of an arbe server.", epilog="ARBE_URL and "
        "ARBE_TOKEN set the server and token; --url and --token override them."
    )  # fmt: skip
    root.add_argument("--url", help="the arbe server (default: $ARBE_URL or 127.0.0.1:8000)")
    root.add_argument("--token", help="an API token, arbe_… (default: $ARBE_TOKEN)")
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    commands.add_parser("houses", help="your houses and their status")
    threads = commands.add_parser("threads", help="threads by recency")
    threads.add_argument("house", nargs="?", help="only this house (its slug)")
    new = commands.add_parser("new", help="start a thread in a house; prints its id")
    new.add_argument("house")
    new.add_argument("title", nargs="+")
    dm = commands.add_parser("dm", help="open your direct conversation with people or bots")
    dm.add_argument("people", nargs="+", metavar="HANDLE")
    dm.add_argument("--house", help="its slug (default: your only house)")
    dm.set_defaults(handler=direct.dm)
    post = commands.add_parser("post", help="post a message (text, or stdin when none or -)")
    post.add_argument("thread")
    post.add_argument("text", nargs="*")
    post.add_argument("--id", help="your id for the message: a retry with it posts once")
    readers = (
        ("read", "the thread (or what came after --from), then exit"),
        ("follow", "the thread, then live until Ctrl-C"),
    )
    for name, text in readers:
        reader = commands.add_parser(name, help=text)
        reader.add_argument("thread")
        reader.add_argument("--from", dest="offset", help="an offset printed earlier")
        reader.add_argument("--json", action="store_true", help="every entry as a JSON line")
    now_options(commands.add_parser("now", help="the same as: thread now"))
    thread = commands.add_parser("thread", help="one thread: its current view, its entries")
    about = thread.add_subparsers(dest="thread_command", required=True, metavar="WHAT")
    now_options(about.add_parser("now", help="who is working, what waits, the spend"))
    entries = about.add_parser("entries", help="the thread's entries")
    reading = entries.add_subparsers(dest="entries_command", required=True, metavar="HOW")
    read = reading.add_parser(
        "read", help="entries as the page shows them, until nothing is working or waiting"
    )
    read.add_argument("thread")
    read.add_argument("--from", dest="offset", help="an offset printed earlier")
    read.add_argument("--raw", action="store_true", help="deleted messages too")
    read.add_argument("--json", action="store_true", help="every entry as a JSON line")
    read.set_defaults(handler=entries_read)
    edit = commands.add_parser("edit", help="edit your message (text, or stdin when none or -)")
    edit.add_argument("thread")
    edit.add_argument("entry")
    edit.add_argument("text", nargs="?")
    delete = commands.add_parser("delete", help="delete a message (yours, or as an owner)")
    delete.add_argument("thread")
    delete.add_argument("entry")
    run = commands.add_parser("run", help="delegate a coding run to a bot; prints the child")
    run.add_argument("thread")
    run.add_argument("agent", help="the bot, e.g. @helper")
    run.add_argument("task", nargs="+")
    search = commands.add_parser(
        "search", help='search messages: words, "phrases", -word, from:@h, in:house, dates'
    )
    search.add_argument("query", nargs="*")
    search.add_argument("--house", help="only this house (its slug)")
    search.add_argument("--sort", choices=("newest", "relevance"), default="newest")
    search.add_argument("--max", type=int, default=200, help="stop after this many (200)")
    inbox = commands.add_parser(
        "inbox", help="mentions of you and bots' replies to you, newest first (* unread)"
    )
    inbox.add_argument("--max", type=int, default=50, help="stop after this many (50)")
    inbox.add_argument("--unread", action="store_true", help="only what you haven't read")
    inbox.add_argument("--mark-read", action="store_true", help="mark everything read")
    return root


def now_options(now: argparse.ArgumentParser) -> None:
    now.add_argument("thread")
    now.add_argument("--follow", action="store_true", help="keep it current until Ctrl-C")
    now.add_argument("--json", action="store_true")
    now.set_defaults(handler=now_command)


# Commands whose last argument is free text, and where it goes.
TEXT_ARGUMENT = {"post": "text", "new": "title", "run": "task", "search": "query"}
# Commands whose free text may hold words that start with "-" (``-rollback``).
DASHED_TEXT = {"search"}


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Like ``parse_args``, but words after an option still join a command's free text
    (``arbe post T --id x hello``), which argparse alone leaves unrecognised."""
    root = parser()
    args, extra = root.parse_known_args(argv)
    field = TEXT_ARGUMENT.get(args.command)
    dashes_refused = args.command not in DASHED_TEXT
    if extra and (field is None or (dashes_refused and any(w.startswith("-") for w in extra))):
        root.error("unrecognized arguments: " + " ".join(extra))
    if extra:
        setattr(args, field, [*getattr(args, field), *extra])
    return args


def main(
    argv: list[str] | None = None,
    *,
    transports=None,
    environ: Mapping[str, str] = os.environ,
    stdin=None,
    stdout=None,
    stderr=None,
    cancel: threading.Event | None = None,
) -> int:
    """Run one command; 0 on success, 1 on an error the server or setup reported, 2 on usage."""
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    args = parse(argv)
    try:
        api = Api(Settings.resolve(args.url, args.token, environ), transports)
    except CliError as exc:
        print(f"arbe: {exc}", file=stderr)
        return 1
    out = Output(stdout, stderr)
    try:
        handler = getattr(args, "handler", None) or COMMANDS[args.command]
        handler(api, args, out, stdin=stdin, cancel=cancel)
    except CliError as exc:
        print(f"arbe: {exc}", file=stderr)
        return 1
    except errors.StreamError as exc:
        print(f"arbe: {stream_problem(exc)}", file=stderr)
        return 1
    finally:
        api.close()
    return 0


def stream_problem(exc: errors.StreamError) -> str:
    status = getattr(exc, "status", None)
    if status == 401:
        return "The server refused the token (revoked, or not an arbe token?)."
    if status == 404:
        return "Not found, or not in a house you belong to."
    if status == 400:
        return f"The server refused that offset: {exc}"
    return f"Reading the thread failed: {exc}"


# -- commands --------------------------------------------------------------------------


def houses(api: Api, args, out: Output, **_) -> None:
    for house in api.houses():
        out.line(house_line(house))


def threads(api: Api, args, out: Output, **_) -> None:
    names: dict[str, Names] = {}
    for thread in api.threads(args.house):
        legacy = AGENT_ID.search(thread.statusMessage)
        if legacy and thread.house not in names:  # read only for a record that holds ids
            names[thread.house] = api.names(thread.house)
        out.line(thread_line(thread, names.get(thread.house)))


def new(api: Api, args, out: Output, **_) -> None:
    out.line(api.new_thread(args.house, " ".join(args.title)).thread.id)


def post(api: Api, args, out: Output, *, stdin, **_) -> None:
    text = " ".join(args.text) if args.text and args.text != ["-"] else stdin.read()
    if not text.strip():
        raise CliError("Nothing to post: give the text, or pipe it in.")
    with api.scoped(args.thread) as scoped:
        try:
            posted = scoped.post_chat(text.rstrip("\n"), args.id)
        except errors.StreamError as exc:
            raise CliError(post_problem(exc)) from None
    out.line(posted.entry["id"])


def post_problem(exc: errors.StreamError) -> str:
    if getattr(exc, "status", None) in (400, 403):
        return f"The server refused the message: {exc}"
    return stream_problem(exc)


def read(api: Api, args, out: Output, **_) -> None:
    with api.scoped(args.thread) as scoped:
        entries, offset = history(scoped, args.offset, out)
    shown = entries if args.json else caught_up(entries)
    print_entries(shown, names_of(api, args.thread, entries), args.json, out)
    out.note(f"offset: {offset}")


def follow(api: Api, args, out: Output, *, cancel: threading.Event | None, **_) -> None:
    """The history as a chat view shows it (deleted messages are not there), then each new
    entry as it comes: a message deleted after it was printed gets a line saying so."""
    cancel = cancel or interrupt_event()
    with api.scoped(args.thread) as scoped:
        entries, offset = history(scoped, args.offset, out)
        names = names_of(api, args.thread, entries)
        print_entries(entries if args.json else caught_up(entries), names, args.json, out)
        for raw in scoped.tail(offset, cancel=cancel):
            entry = decoded([raw], out)
            if entry and entry[0].authorId and entry[0].authorId not in names:
                names = names_of(api, args.thread, [entry[0].authorId])  # someone new joined
            print_entries(entry, names, args.json, out)
        if scoped.offset:
            out.note(f"offset: {scoped.offset} (arbe follow {args.thread} --from it resumes)")


def history(scoped, offset: str | None, out: Output) -> tuple[list, str]:
    """Entries from ``offset`` (or the start) to the tail, without waiting, and the offset
    after them."""
    raw = []
    while True:
        page = scoped.read(offset) if offset else scoped.read()
        raw += page.entries
        offset = page.next_offset
        if page.up_to_date or page.closed or not page.entries:
            return decoded(raw, out), offset


def now_command(api: Api, args, out: Output, *, cancel: threading.Event | None, **_) -> None:
    if args.follow:
        offset = follow_now(api, args.thread, out, cancel or interrupt_event())
        out.note(f"offset: {offset}")
        return
    answer = api.now(args.thread)
    if args.json:
        out.line(msgspec.json.format(msgspec.json.encode(answer), indent=2).decode())
        return
    names = names_of(api, args.thread)
    for line in now_lines(answer, names):
        out.line(line)
    out.note(f"offset: {answer.offset}")


def entries_read(api: Api, args, out: Output, *, cancel: threading.Event | None, **_) -> None:
    offset = read_until_quiet(api, args, out, cancel or interrupt_event())
    out.note(f"offset: {offset} (arbe thread entries read {args.thread} --from it resumes)")


def edit(api: Api, args, out: Output, *, stdin, **_) -> None:
    text = args.text if args.text not in (None, "-") else stdin.read()
    if not text.strip():
        raise CliError("Nothing to say: the new text is empty.")
    api.edit(args.thread, args.entry, text.rstrip("\n"))
    out.line(f"edited {args.entry}")


def delete(api: Api, args, out: Output, **_) -> None:
    api.delete(args.thread, args.entry)
    out.line(f"deleted {args.entry}")


def run(api: Api, args, out: Output, **_) -> None:
    started = api.run(args.thread, args.agent, " ".join(args.task))
    out.line(started["childThreadId"])


def search(api: Api, args, out: Output, **_) -> None:
    """Every match, page after page (following the cursor), up to ``--max``."""
    q, cursor, shown = " ".join(args.query), None, 0
    if not q.strip():
        raise CliError('Nothing to search for: give words, a "phrase" or from:@handle.')
    bold = out.stdout.isatty() if hasattr(out.stdout, "isatty") else False
    while shown < args.max:
        page = api.search(q, args.house, args.sort, cursor)
        for hit in page.results[: args.max - shown]:
            out.line(hit_line(hit, bold))
            shown += 1
        cursor = page.next
        if cursor is None:
            break
    if shown == 0:
        out.note("No messages match.")
    elif cursor is not None:
        out.note(f"… more than {args.max}; narrow the search or raise --max.")


def inbox(api: Api, args, out: Output, **_) -> None:
    """The same list as /inbox/ and GET /api/inbox, page after page, up to ``--max``."""
    if args.mark_read:
        marked = api.inbox_read()
        out.note(f"Marked {marked} read." if marked else "Nothing was unread.")
        return
    bold = out.stdout.isatty() if hasattr(out.stdout, "isatty") else False
    cursor, shown, unread = None, 0, 0
    while shown < args.max:
        page = api.inbox(cursor)
        unread = page.unread
        for item in page.items:
            if shown >= args.max:
                break
            if args.unread and not item.unread:
                continue
            out.line(inbox_line(item, bold))
            shown += 1
        cursor = page.next
        if cursor is None:
            break
    if shown == 0:
        out.note("Nothing unread for you." if args.unread else "Nothing addressed to you yet.")
    else:
        out.note(f"{unread} unread.")


COMMANDS = {
    "houses": houses,
    "inbox": inbox,
    "threads": threads,
    "new": new,
    "post": post,
    "read": read,
    "follow": follow,
    "delete": delete,
    "edit": edit,
    "run": run,
    "search": search,
}


# -- helpers ---------------------------------------------------------------------------


def names_of(api: Api, thread_id: str, entries=()) -> Names:
    """The thread's house's names, with whoever of ``entries``' authors has left it."""
    authors = [e if isinstance(e, str) else e.authorId for e in entries]
    return api.names(api.thread(thread_id).house, authors)


def interrupt_event() -> threading.Event:
    """An event Ctrl-C sets, so a waiting long-poll ends at once instead of a traceback."""
    event = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, lambda *_: event.set())
    return event


if __name__ == "__main__":
    sys.exit(main())
