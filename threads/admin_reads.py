"""Site admins reading private threads: allowed, and recorded.

The operator of last resort may open any thread in the Django admin (an abuse report, a
legal request, a repair). When that thread is private or a direct conversation, each view
of its admin page or its raw entries is kept as an ``AdminRead`` row and logged — who,
which thread, when — before the page renders; the rows are read-only in the admin
(docs/permissions.md). House owners get no such door: they read only what they are in.
"""

from __future__ import annotations

import logging

from django.contrib import admin

from threads.models import AdminRead, Thread

logger = logging.getLogger("arbe.admin_reads")


def record_admin_read(request, thread: Thread, page: str) -> None:
    """Keep (and log) the site admin's read of ``thread`` if it is private."""
    if not thread.is_private:
        return
    user = request.user
    AdminRead.objects.create(
        user=user,
        username=user.get_username(),
        thread_id=thread.pk,
        thread_title=thread.title[:200],
        page=page,
    )
    logger.warning(
        "site admin read a private thread",
        extra={"admin": user.get_username(), "thread_id": thread.pk, "page": page},
    )


@admin.register(AdminRead)
class AdminReadAdmin(admin.ModelAdmin):
    """The record, as it was written: nobody adds, changes or deletes rows here."""

    list_display = ["at", "username", "thread_id", "thread_title", "page"]
    list_filter = ["page"]
    search_fields = ["username", "thread_id", "thread_title"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
