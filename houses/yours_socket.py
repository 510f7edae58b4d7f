"""What is yours, live, over the socket a page already has (docs/notifications.md, Live).

The house page's, the thread page's and the houses page's sockets (``houses.consumers``,
``threads.consumers``, ``houses.home_socket``) mix in ``YoursFollower``: they join the
person's ``inbox-<user id>`` group (``notify.inbox`` and ``notify.yours`` send to it) and,
with a sidebar, their house's and reads' groups. Each event re-renders from the database
what it concerns, for this person: the sidebar's row, the other houses' totals, the bell,
and for a new item the notice ``static/arbe/yours.js`` turns into a desktop notification.
No page opens a second socket for this.
"""

from __future__ import annotations

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from arbe_lib.group_relay import relays
from houses.access import event_reaches, houses_of, read_by
from houses.sidebar import bell_fragment, houses_fragment, row_fragment, rows_fragment

__all__ = ["YoursFollower", "bell_fragment", "frames", "notice_fragment"]
from notify.bell import modes_of
from notify.inbox import inbox_group
from notify.links import entry_path
from notify.models import InboxItem, Level

VERBS = {InboxItem.Kind.MENTION: "mentioned you in", InboxItem.Kind.DIRECT: "wrote to you in"}


def notice_fragment(user, entry_id: str, current: str = "") -> str:
    """The notice for a new item: who, where, the text, a link; ``silent`` when the person
    muted the thread, turned notifications off, or is looking at the thread already."""
    item = (
        InboxItem.objects.select_related("thread", "house")
        .filter(user=user, entry_id=entry_id, house__in=houses_of(user).values("pk"))
        .filter(read_by(user, "thread__"))
        .first()
    )
    if item is None:
        return ""
    from houses.models import Agent

    author = Agent.objects.filter(pk=item.author_id).values_list("display_name", flat=True)
    who = author.first() or "Someone"
    where = f"“{item.thread.title}”"
    verb = VERBS.get(item.kind, "replied to you in")
    _, _, effective = modes_of(user, item.thread_id)
    silent = effective == Level.NOTHING or item.thread_id == current
    url = entry_path(item.thread_id, entry_id)
    context = {
        "entry_id": entry_id,
        # A direct conversation's stored title names its people: "who wrote to you" says it.
        "title": f"{who} wrote to you" if item.thread.is_direct else f"{who} {verb} {where}",
        "body": item.text,
        "url": url,
        "silent": silent,
        "house": item.house.name,
    }
    return render_to_string("notify/_notice.html", context)


def frames(user, event: dict, *, house_id: int | None, current: str = "", side: bool) -> str:
    """The fragments one event makes for one page of ``user`` (sync: on a worker thread)."""
    kind, thread = event.get("type", ""), event.get("thread", "")
    out = []
    if kind in ("thread.status", "thread.row"):
        if side and thread and thread != current:
            out.append(row_fragment(house_id, thread, user, current=current, move=True))
        return "".join(out)
    if side and thread and thread != current:
        out.append(row_fragment(house_id, thread, user, current=current, move=False))
    elif side and kind == "inbox.changed" and not thread:
        out.append(rows_fragment(house_id, user, current))  # all read: every badge goes
    if side:
        out.append(houses_fragment(user, house_id))  # other houses' totals and the bell
    else:
        out.append(bell_fragment(user))
    if kind == "inbox.item":
        out.append(notice_fragment(user, event.get("entry", ""), current))
    return "".join(out)


class YoursFollower:
    """Mixed into a page's consumer: ``follow_yours`` after access is granted.

    A consumer with ``relayed_house`` follows its house's group through this process's
    relay (``arbe_lib.group_relay``), which sends it only the events ``wants`` accepts.
    """

    relayed_house = False
    yours_relay: str | None = None  # the house group followed through the relay
    yours_user = None  # the user's id, for ``wants``
    yours_groups: list[str] | None = None
    yours_house: int | None = None
    yours_current = ""
    yours_side = False

    async def follow_yours(self, *, house_id: int | None, current: str = "", side: bool):
        from threads.unread import reads_group

        self.yours_house, self.yours_current, self.yours_side = house_id, current, side
        groups = [inbox_group(self.user.pk)]
        if side:
            groups.append(reads_group(self.user.pk))
            if not self.relayed_house:
                groups.append(f"house-{house_id}")
        self.yours_groups = groups
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)
        if side and self.relayed_house:
            self.yours_user = self.user.pk
            self.yours_relay = f"house-{house_id}"
            await relays().follow(self.yours_relay, self)

    async def unfollow_yours(self) -> None:
        if self.yours_relay is not None:
            relays().leave(self.yours_relay, self)
            self.yours_relay = None
        for group in self.yours_groups or ():
            await self.channel_layer.group_discard(group, self.channel_name)
        self.yours_groups = None

    def wants(self, event: dict) -> bool:
        """Offered a house event by the relay: False for what ``send_yours`` would drop
        unrendered (its own thread's row, a private thread not this person's, a board's
        rows, which its own page renders); anything else goes to the consumer as before.
        Once per socket and event: plain lookups only (the user is a lazy object)."""
        kind = event.get("type")
        if kind in ("thread.status", "thread.row"):
            if event.get("thread", "") in ("", self.yours_current):
                return False
        elif kind == "board.rows":
            return False
        return self.yours_groups is not None and event_reaches(event, self.yours_user)

    async def send_yours(self, event: dict) -> None:
        if self.yours_groups is None or not event_reaches(event, self.user.pk):
            return
        if event.get("type") in ("thread.status", "thread.row") and (
            not self.yours_side or event.get("thread", "") in ("", self.yours_current)
        ):
            # Nothing to render (``frames`` would answer ""): no trip to the one thread
            # database calls share. A post moves its own thread's row; a thousand sockets on
            # that thread queued a thousand such trips ahead of the next request.
            return
        html = await database_sync_to_async(frames)(
            self.user,
            event,
            house_id=self.yours_house,
            current=self.yours_current,
            side=self.yours_side,
        )
        if html and self.yours_groups is not None:
            await self.send(text_data=html)

    async def inbox_item(self, event):
        await self.send_yours(event)

    async def inbox_changed(self, event):
        await self.send_yours(event)
