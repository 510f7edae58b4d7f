"""The house page's thread rows, for the page and for the house socket alike."""

import re

from django.template.loader import render_to_string

from threads.fragments import Names, house_names
from threads.models import Thread

AGENT_ID = re.compile(r"\bag_[a-z0-9]{12}\b")


def who_is_working(message: str, names: Names) -> str:
    """A status message with agent ids shown as handles ("@helper is thinking")."""
    return AGENT_ID.sub(lambda m: "@" + names.of(m.group()).handle, message)


def thread_rows(threads, names: Names) -> list[dict]:
    return [{"thread": t, "message": who_is_working(t.status_message, names)} for t in threads]


def row_fragment(house_id: int, thread_id: str) -> str:
    """Move a thread's row to the top of the list (its status just changed), freshly rendered."""
    thread = Thread.objects.filter(
        pk=thread_id, house_id=house_id, archived_at__isnull=True
    ).first()
    if thread is None:
        return ""
    (row,) = thread_rows([thread], house_names(house_id))
    return render_to_string("houses/_thread_row_oob.html", {"row": row})
