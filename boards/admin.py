from django import forms
from django.contrib import admin

from boards.models import BoardRow, T3Host


class T3HostForm(forms.ModelForm):
    """The token is write-only: never rendered back; left blank, the stored one is kept."""

    url = forms.URLField(assume_scheme="http", help_text="The server's origin.")
    token = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Environment token. Leave blank to keep the current one.",
    )

    class Meta:
        model = T3Host
        fields = ["house", "label", "url", "token", "enabled"]

    def clean_token(self):
        token = self.cleaned_data.get("token")
        return token or (self.instance.token if self.instance.pk else "")


@admin.register(T3Host)
class T3HostAdmin(admin.ModelAdmin):
    form = T3HostForm
    list_display = ["label", "house", "url", "enabled"]
    list_filter = ["enabled", "house"]


@admin.register(BoardRow)
class BoardRowAdmin(admin.ModelAdmin):
    list_display = ["thread_id", "title", "state", "last_turn_at", "host"]
    list_filter = ["host"]
    readonly_fields = ["meta"]
