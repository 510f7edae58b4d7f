from django import forms

from houses.models import HANDLE_PATTERN, INVITE_DAYS, Agent, Membership
from houses.names import clean_title

# "Speaks on …" on the members page: when a bot answers without being mentioned, in the
# director's own terms (dispatch/decide.py).
INVOLVEMENT_WORDS = [
    (Agent.Involvement.MENTIONS, "mentions and one-person threads"),
    (Agent.Involvement.EVERYTHING, "every message"),
]


class NewThreadForm(forms.Form):
    title = forms.CharField(max_length=200)

    def clean_title(self):
        return clean_title(self.cleaned_data["title"])


class AddMemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)


class AddBotForm(forms.Form):
    handle = forms.RegexField(regex=HANDLE_PATTERN, max_length=32)
    display_name = forms.CharField(max_length=100, required=False)
    provider = forms.CharField(max_length=64, required=False)
    model = forms.CharField(max_length=128, required=False)
    instructions = forms.CharField(widget=forms.Textarea, required=False)
    api_key_env = forms.RegexField(regex=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=64, required=False)
    involvement = forms.ChoiceField(
        choices=INVOLVEMENT_WORDS, initial=Agent.Involvement.MENTIONS, required=False
    )

    def clean_involvement(self):
        return self.cleaned_data["involvement"] or Agent.Involvement.MENTIONS


class BotInvolvementForm(forms.Form):
    involvement = forms.ChoiceField(choices=INVOLVEMENT_WORDS)


class InviteForm(forms.Form):
    days = forms.TypedChoiceField(
        choices=list(INVITE_DAYS.items()), coerce=int, initial=7, label="Expires after"
    )
