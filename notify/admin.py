from django.contrib import admin

from notify.models import Notice, PushDevice


@admin.register(Notice)
class NoticeAdmin(admin.ModelAdmin):
    """What was sent (or queued, or dropped) to whom: read-only, the record of sending."""

    list_display = ("created_at", "user", "channel", "state", "reason", "thread", "entry_id")
    list_filter = ("channel", "state", "reason")
    search_fields = ("entry_id", "user__username")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(PushDevice)
class PushDeviceAdmin(admin.ModelAdmin):
    list_display = ("user", "label", "created_at", "last_sent_at")
    fields = ("user", "label", "created_at", "last_sent_at")
    readonly_fields = fields
    search_fields = ("user__username", "label")

    def has_add_permission(self, request):
        return False
