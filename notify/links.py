"""Where a notification's click goes: the thread opened at the message. ``around`` loads the
message's window however far back it is (a mention emailed ten minutes later may be pages
up in a busy thread); the anchor scrolls to it. The inbox, the open page's notice, the push
and the email all link so."""

from django.urls import reverse


def entry_path(thread_id: str, entry_id: str) -> str:
    return reverse("thread", args=[thread_id]) + f"?around={entry_id}#entry-{entry_id}"
