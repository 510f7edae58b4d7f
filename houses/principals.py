"""Who is asking: a person, a bot's sandbox, or the server itself.

Requests are resolved to a ``Principal`` once, at the edge (``houses.auth``),
and every access check takes that principal.
"""

from dataclasses import dataclass

from houses.models import Agent
from threads.permissions import Writer, WriterKind
from threads.sandbox_tokens import SandboxClaims


@dataclass(frozen=True)
class Principal:
    kind: WriterKind
    agent: Agent | None
    user: object | None = None
    claims: SandboxClaims | None = None
    # Authenticated by a bearer credential rather than the session cookie (no CSRF check).
    bearer: bool = False
    token_id: int | None = None  # the person's API token, when that is the credential

    @property
    def agent_id(self) -> str | None:
        return self.agent.id if self.agent else None

    @property
    def is_person(self) -> bool:
        return self.kind == WriterKind.PERSON

    @property
    def is_bot(self) -> bool:
        return self.kind == WriterKind.BOT

    def writer(self) -> Writer:
        claims = self.claims
        return Writer(
            kind=self.kind,
            agent_id=self.agent_id,
            kinds=frozenset(claims.kinds) if claims else frozenset(),
            dispatch=claims.dispatch if claims else None,
            run=claims.run if claims else None,
        )


SERVICE = Principal(kind=WriterKind.SERVICE, agent=None)


def person(user, agent: Agent, *, bearer: bool = False, token_id: int | None = None) -> Principal:
    return Principal(
        kind=WriterKind.PERSON, agent=agent, user=user, bearer=bearer, token_id=token_id
    )


def bot(agent: Agent, claims: SandboxClaims) -> Principal:
    return Principal(kind=WriterKind.BOT, agent=agent, claims=claims, bearer=True)
