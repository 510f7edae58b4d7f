"""Thread status in the admin: the stored record, a guarded recompute, and the raw log.

The raw entries view reads the stream page by page, as the server pages it, and
shows each page's ``next_offset`` — tombstones and what they hide included.
"""

from django.contrib import admin, messages
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from streams import errors
from threads.entries import EntryError, decode_entry
from threads.log import log_reader
from threads.models import Thread
from threads.projection import tombstoned_ids
from threads.status_sync import sync_status


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = [
        "title",
        "id",
        "house",
        "status",
        "status_message",
        "status_rev",
        "last_entry_ts",
        "archived_at",
        "raw_entries",
    ]
    list_filter = [
        "status",
        "house",
        ("archived_at", admin.EmptyFieldListFilter),
        ("parent", admin.EmptyFieldListFilter),
    ]
    search_fields = ["title", "id", "status_message"]
    readonly_fields = [
        "id",
        "created_at",
        "status_rev",
        "last_entry_ts",
        "run_offset",
        "director_offset",
        "director_tail",
        "raw_entries",
    ]
    list_select_related = ["house"]
    actions = ["recompute_status"]

    @admin.action(description="Recompute status")
    def recompute_status(self, request, queryset):
        # The /now fold written through the status_rev guard, as the sweep does.
        for thread_id in queryset.values_list("pk", flat=True):
            sync_status(thread_id)
        messages.success(request, f"Recomputed {queryset.count()} thread(s).")

    @admin.display(description="Raw entries")
    def raw_entries(self, obj):
        if obj.pk is None:
            return "—"
        return format_html(
            '<a href="{}">entries</a>', reverse("admin:thread-entries", args=[obj.pk])
        )

    def get_urls(self):
        entries = self.admin_site.admin_view(self.entries_view)
        return [path("<str:pk>/entries/", entries, name="thread-entries"), *super().get_urls()]

    def entries_view(self, request, pk):
        """One page of the stream, read-only: every entry, its tombstone state, the offsets."""
        thread = get_object_or_404(Thread, pk=pk)
        if not self.has_view_permission(request, thread):
            raise PermissionError
        offset = request.GET.get("offset", "-1")
        try:
            page = log_reader().read(thread.stream_name, offset)
        except errors.StreamError as exc:
            messages.error(request, f"Could not read from {offset!r}: {exc}")
            page = None
        rows = []
        for raw in (page.messages or ()) if page else ():
            try:
                entry = decode_entry(raw)
            except EntryError as exc:
                rows.append({"raw": raw.decode(errors="replace"), "error": str(exc)})
                continue
            rows.append({"entry": entry, "raw": raw.decode(errors="replace")})
        gone = tombstoned_ids(r["entry"] for r in rows if "entry" in r)
        for row in rows:
            row["tombstoned"] = "entry" in row and row["entry"].id in gone
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "thread": thread,
            "title": f"Raw entries of {thread}",
            "offset": offset,
            "page": page,
            "rows": rows,
        }
        return TemplateResponse(request, "admin/threads/thread/entries.html", context)
