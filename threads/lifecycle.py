"""Creating, renaming and archiving threads."""

from houses.models import Agent, House
from threads.models import Thread


def create_thread(*, house: House, title: str, by: Agent | None, parent: Thread | None = None):
    return Thread.objects.create(house=house, title=title, created_by=by, parent=parent)
