"""A person's own API tokens: issue (the raw value is shown once), list, revoke.

Only the token's digest is stored (``houses.models.ApiToken``); the raw value
exists in the response that issues it and nowhere else.
"""

from django.http import Http404

from houses.models import ApiToken

MAX_NAME = 100


class BadTokenName(ValueError):
    """A token name that is blank or longer than :data:`MAX_NAME`."""


def tokens_of(user):
    return ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at")


def issue_token(user, name: str) -> tuple[ApiToken, str]:
    name = name.strip()
    if not name or len(name) > MAX_NAME:
        raise BadTokenName(f"A token's name is 1–{MAX_NAME} characters, e.g. “laptop CLI”.")
    return ApiToken.issue(user, name)


def revoke_token(user, token_id: int) -> ApiToken:
    """Revoke one of ``user``'s tokens; anyone else's is a 404, as if it did not exist.

    Reads open with it (SSE, long-poll) end too: the save is announced by
    ``houses.revocation``, and its next request is a 401 (``houses.auth``)."""
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        raise Http404("No such token.")
    token.revoke()
    return token
