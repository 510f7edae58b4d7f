from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from houses.models import Agent, ApiToken, House, HouseInvite, Membership
from houses.names import check_username
from houses.rollup import with_rollup


class CheckedUserCreationForm(AdminUserCreationForm):
    def clean_username(self):
        username = super().clean_username()
        if username is not None:  # None: Django refused it already (a case-insensitive twin)
            check_username(username)
        return username


class CheckedUserChangeForm(UserChangeForm):
    def clean_username(self):
        # Only a new username is checked: an old look-alike pair mustn't block other edits.
        username = self.cleaned_data["username"]
        if "username" in self.changed_data:
            check_username(username, exclude_pk=self.instance.pk)
        return username


admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class PersonAdmin(UserAdmin):
    """Django's user admin, with usernames held to ``houses.names`` (no look-alikes)."""

    add_form = CheckedUserCreationForm
    form = CheckedUserChangeForm


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


class BotForm(forms.ModelForm):
    """A bot set here is checked like one set by its owner: a provider Pi knows, a key
    variable bots may use (never one of the server's own settings)."""

    class Meta:
        model = Agent
        fields = ["display_name", "handle", "provider", "model", "api_key_env", "instructions"]

    def clean(self):
        from dispatch.botcheck import validate_bot_config

        data = super().clean()
        validate_bot_config(data.get("provider") or "", data.get("api_key_env") or "")
        return data


class BotInline(admin.StackedInline):
    model = Agent
    form = BotForm
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


def _count(state: str):
    @admin.display(description=state, ordering=f"n_{state}")
    def count(self, obj):
        return getattr(obj, f"n_{state}")

    return count


@admin.register(House)
class HouseAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "slug",
        "n_blocked",
        "n_working",
        "n_error",
        "n_done",
        "n_idle",
        "top_thread",
        "created_at",
    ]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline, BotInline]

    n_blocked, n_working, n_error = _count("blocked"), _count("working"), _count("error")
    n_done, n_idle = _count("done"), _count("idle")

    def get_queryset(self, request):
        # The rollup is computed on read, in SQL (houses.rollup), like GET /api/houses.
        return with_rollup(super().get_queryset(request), None, operator=True)

    @admin.display(description="speaking thread")
    def top_thread(self, obj):
        return obj.top_thread_id or "—"

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
    list_display = ["display_name", "handle", "id", "kind", "house", "provider", "model", "active"]
    list_filter = ["kind", "active", "house"]
    search_fields = ["display_name", "handle", "id"]
    readonly_fields = ["id", "created_at"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are read and revoked here; people make their own at /tokens/ (or
    ``manage.py issue_token``), where the raw value can be shown once."""

    list_display = ["name", "user", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    readonly_fields = ["user", "name", "digest", "created_at", "last_used_at", "revoked_at"]
    search_fields = ["name", "user__username"]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset:
            token.revoke()


@admin.register(HouseInvite)
class HouseInviteAdmin(admin.ModelAdmin):
    """Invite links are made on the house's members page, where the link is shown once;
    here they are read and revoked."""

    list_display = ["house", "created_by", "created_at", "expires_at", "revoked_at", "joined_count"]
    list_filter = ["house", ("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = ["house", "created_by"]
    readonly_fields = [
        "house",
        "token_hash",
        "created_by",
        "created_at",
        "expires_at",
        "revoked_at",
        "joined_count",
    ]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Revoke the selected invite links")
    def revoke(self, request, queryset):
        from houses.invites import revoke_invite

        for invite in queryset:
            revoke_invite(invite)
