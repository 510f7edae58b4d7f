from django.contrib import admin

from houses.models import Agent, ApiToken, House, Membership


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class BotInline(admin.StackedInline):
    model = Agent
    fk_name = "house"
    extra = 0
    fields = [
        "display_name",
        "handle",
        "provider",
        "model",
        "api_key_env",
        "instructions",
        "active",
    ]
    verbose_name = "bot"
    verbose_name_plural = "bots"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(kind=Agent.Kind.BOT)


@admin.register(House)
class HouseAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline, BotInline]

    def save_formset(self, request, form, formset, change):
        # Bots added inline are bots, whatever the form left in ``kind``.
        instances = formset.save(commit=False)
        for instance in instances:
            if isinstance(instance, Agent):
                instance.kind = Agent.Kind.BOT
            instance.save()
        for obj in formset.deleted_objects:
            obj.delete()
        formset.save_m2m()


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["display_name", "handle", "kind", "house", "provider", "model", "active"]
    list_filter = ["kind", "active", "house"]
    search_fields = ["display_name", "handle", "id"]
    readonly_fields = ["id", "created_at"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["digest", "created_at", "last_used_at"]
    search_fields = ["name", "user__username"]
