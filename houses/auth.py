"""Resolving a request to its principal: session cookie, API token or sandbox JWT."""

from datetime import timedelta

from asgiref.sync import sync_to_async
from django.utils import timezone

from houses import principals
from houses.membership import agent_for_user
from houses.models import TOKEN_PREFIX, Agent, ApiToken, token_digest
from houses.principals import Principal
from threads.sandbox_tokens import InvalidSandboxToken, verify

TOKEN_TOUCH_INTERVAL = timedelta(minutes=5)


class BadCredentials(Exception):
    """A bearer credential was sent and is not valid (401, never a fallback to the session)."""


def bearer_token(request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def principal_from_bearer(raw: str) -> Principal:
    if raw.startswith(TOKEN_PREFIX):
        token = (
            ApiToken.objects.select_related("user__agent")
            .filter(digest=token_digest(raw), revoked_at__isnull=True, user__is_active=True)
            .first()
        )
        if token is None:
            raise BadCredentials("unknown or revoked API token")
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > TOKEN_TOUCH_INTERVAL:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return principals.person(
            token.user, agent_for_user(token.user), bearer=True, token_id=token.pk
        )
    try:
        claims = verify(raw)
    except InvalidSandboxToken as exc:
        raise BadCredentials(f"invalid sandbox token: {exc}") from None
    agent = Agent.objects.filter(pk=claims.sub, kind=Agent.Kind.BOT, active=True).first()
    if agent is None:
        raise BadCredentials("the token's bot does not exist or is inactive")
    return principals.bot(agent, claims)


def principal_from_request(request) -> Principal | None:
    """The caller, or None when anonymous. Raises ``BadCredentials`` for a bad bearer."""
    raw = bearer_token(request)
    if raw is not None:
        return principal_from_bearer(raw)
    user = request.user
    if user.is_authenticated and user.is_active:
        return principals.person(user, agent_for_user(user))
    return None


async def aprincipal_from_request(request) -> Principal | None:
    raw = bearer_token(request)
    if raw is not None:
        return await sync_to_async(principal_from_bearer)(raw)
    user = await request.auser()
    if user.is_authenticated and user.is_active:
        return principals.person(user, await sync_to_async(agent_for_user)(user))
    return None
