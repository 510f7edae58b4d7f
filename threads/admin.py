"""Thread status in the admin: the stored record, a guarded recompute, and the raw log.

The raw entries view reads the stream page by page, as the server pages it, and
shows each page's ``next_offset`` — tombstones and what they hide included.
"""

import json
from contextvars import ContextVar

from django import forms
from django.contrib import admin, messages
from django.shortcuts import get_object_or_404
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html

from houses.fragments import AGENT_ID, when
from houses.models import Agent
from houses.names import clean_title
from streams import errors
from threads.admin_reads import record_admin_read
from threads.entries import EntryError, decode_entry
from threads.fragments import house_names
from threads.log import log_reader
from threads.models import Thread
from threads.projection import tombstoned_ids
from threads.status_sync import sync_status

PAGE_NAMES: ContextVar[dict | None] = ContextVar("admin_agent_names", default=None)
FOLD_CHARS = 240  # longer entries fold under <details> in the raw entries view


def all_agent_names() -> dict[str, str]:
    return {
        agent_id: f"{name} (@{handle})"
        for agent_id, name, handle in Agent.objects.values_list("id", "display_name", "handle")
    }


def with_names(text: str, names: dict[str, str]) -> str:
    """Agent ids in ``text`` with the agent's name beside each: "Helper (@helper) ag_…"."""
    return AGENT_ID.sub(
        lambda m: f"{names[m.group()]} {m.group()}" if m.group() in names else m.group(), text
    )


def shown_date(moment, fmt: str = "j M Y, H:i:s") -> str:
    """A date in the site's time zone, to the second (entries are often seconds apart)."""
    return date_format(timezone.localtime(moment), fmt) if moment else "—"


def raw_row(raw: bytes) -> dict:
    """An entry's JSON as stored, and pretty-printed for reading; long ones fold."""
    text = raw.decode(errors="replace")
    try:
        pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        pretty = text
    return {"raw": text, "pretty": pretty, "long": len(text) > FOLD_CHARS}


class ThreadForm(forms.ModelForm):
    class Meta:
        model = Thread
        fields = "__all__"  # noqa: DJ007 - the admin's own field list decides

    def clean_title(self):
        return clean_title(self.cleaned_data["title"])


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    form = ThreadForm
    list_display = [
        "title",
        "house",
        "status",
        "status_said",
        "status_rev",
        "last_entry",
        "chats",
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
        "status",
        "status_message",
        "status_rev",
        "last_entry",
        "chats",
        "last_chat",
        "run_offset",
        "director_offset",
        "director_tail",
        "director_speakers",
        "raw_entries",
    ]
    # The status record and the chat cache are folds of the log: read here, written only by
    # their guarded paths (the "Recompute status" action, ``manage.py rebuild_chat_cache``).
    # Stored epoch milliseconds are for sorting; people read dates.
    fieldsets = [
        (None, {"fields": ["title", "house", "id", "created_by", "created_at"]}),
        (
            "From the log",
            {
                "fields": [
                    "status",
                    "status_message",
                    "status_rev",
                    "last_entry",
                    "chats",
                    "last_chat",
                    "raw_entries",
                ]
            },
        ),
        ("Lifecycle", {"fields": ["archived_at", "parent"]}),
        (
            "Director and runs",
            {
                "classes": ["collapse"],
                "fields": ["director_offset", "director_tail", "director_speakers", "run_offset"],
            },
        ),
    ]
    list_select_related = ["house"]
    actions = ["recompute_status"]

    class Media:
        css = {"all": ["arbe/admin.css"]}

    def save_model(self, request, obj, form, change):
        """A title or archive change is a fact of the thread: appended to its log first
        (``threads.lifecycle``), then stored; the row's other fields save as usual."""
        if not change:
            return super().save_model(request, obj, form, change)
        from houses.models import Agent
        from threads.lifecycle import archive_thread, rename_thread

        old = Thread.objects.get(pk=obj.pk)
        title, archived = obj.title, obj.archived_at is not None
        obj.title, obj.archived_at = old.title, old.archived_at
        super().save_model(request, obj, form, change)
        by = Agent.objects.filter(user=request.user).first()
        rename_thread(obj, title, by=by)
        archive_thread(obj, by=by, archived=archived)

    def changelist_view(self, request, extra_context=None):
        # Status messages name agents by id: one query for every name on the page.
        token = PAGE_NAMES.set(all_agent_names())
        try:
            return super().changelist_view(request, extra_context)
        finally:
            PAGE_NAMES.reset(token)

    @admin.display(description="last entry", ordering="last_entry_ts")
    def last_entry(self, obj):
        return shown_date(when(obj.last_entry_ts), "j M Y, H:i")

    @admin.display(description="chats", ordering="chat_seq")
    def chats(self, obj):
        return obj.chat_seq

    @admin.display(description="status message")
    def status_said(self, obj):
        return with_names(obj.status_message, PAGE_NAMES.get(None) or all_agent_names())

    @admin.display(description="last message")
    def last_chat(self, obj):
        if not obj.last_chat_id:
            return "—"
        author = with_names(obj.last_chat_author_id, all_agent_names())
        return f"“{obj.last_chat_text}” — {author}, {shown_date(when(obj.last_chat_ts))}"

    @admin.action(description="Recompute status")
    def recompute_status(self, request, queryset):
        # The /now fold written through the status_rev guard, as the sweep does.
        for thread_id in queryset.values_list("pk", flat=True):
            sync_status(thread_id)
        n = queryset.count()
        messages.success(request, f"Recomputed {n} thread{pluralize(n)}.")

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

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # A private thread's page shows its last message: the site admin's read is kept.
        thread = Thread.objects.filter(pk=object_id).first()
        if thread is not None and self.has_view_permission(request, thread):
            record_admin_read(request, thread, "thread")
        return super().change_view(request, object_id, form_url, extra_context)

    def entries_view(self, request, pk):
        """One page of the stream, read-only: every entry, its tombstone state, the offsets."""
        thread = get_object_or_404(Thread, pk=pk)
        if not self.has_view_permission(request, thread):
            raise PermissionError
        record_admin_read(request, thread, "entries")
        offset = request.GET.get("offset", "-1")
        try:
            page = log_reader().read(thread.stream_name, offset)
        except errors.StreamError as exc:
            messages.error(request, f"Could not read from {offset!r}: {exc}")
            page = None
        names = house_names(thread.house_id)
        rows = []
        for raw in (page.messages or ()) if page else ():
            row = raw_row(raw)
            try:
                entry = decode_entry(raw)
            except EntryError as exc:
                rows.append(row | {"error": str(exc)})
                continue
            author = names.get(entry.authorId) if entry.authorId else None
            rows.append(row | {"entry": entry, "when": when(entry.ts), "author": author})
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
