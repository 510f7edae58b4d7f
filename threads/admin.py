from django.contrib import admin

from threads.models import Thread


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
    ]
    list_filter = ["status", "house", ("archived_at", admin.EmptyFieldListFilter)]
    search_fields = ["title", "id"]
    readonly_fields = [
        "id",
        "created_at",
        "status_rev",
        "last_entry_ts",
        "run_offset",
        "director_offset",
        "director_tail",
    ]
    list_select_related = ["house"]
