"""Houses and who is in them.

- ``House``: a shared workspace.
- ``Membership``: a person in a house, as owner or member (the join row is the domain object).
- ``Agent``: the principal of every person and every bot; its id is what entries
  carry in ``authorId``/``actorId``/``agentId``.
- ``ApiToken``: a person's token for the CLI, stored as a digest.
"""

import hashlib
import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from arbe_lib.ids import random_id
from houses.names import check_display_name

# \Z, not $: "$" also matches before a trailing newline, so "helper\n" was a handle.
HANDLE_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}\Z"
handle_validator = RegexValidator(
    HANDLE_PATTERN, "A handle is 1–32 lower-case letters, digits, '-' or '_'."
)


def new_agent_id() -> str:
    return random_id(12, prefix="ag_")


class House(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner"
        MEMBER = "member"

    house = models.ForeignKey(House, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["house", "user"], name="one_membership_per_house"),
            models.CheckConstraint(
                condition=Q(role__in=["owner", "member"]), name="membership_role_known"
            ),
        ]

    def __str__(self):
        return f"{self.user} in {self.house} ({self.role})"

    @property
    def is_owner(self) -> bool:
        return self.role == self.Role.OWNER

    def clean(self):
        # Joining with a handle a bot has in the house (the admin's inline; the site's own
        # paths check it in houses.membership).
        super().clean()
        agent = Agent.objects.filter(user_id=self.user_id).first() if self.user_id else None
        if self._state.adding and agent is not None and self.house_id is not None:
            clash = handle_clash(agent, self.house_id)
            if clash:
                raise ValidationError(clash)


class Agent(models.Model):
    """A principal: one per person, one per bot.

    A bot belongs to one house and carries how it runs (Pi provider, model,
    instructions). Provider keys are never stored here: ``api_key_env`` names
    the environment variable the runtime reads the key from.
    """

    class Kind(models.TextChoices):
        PERSON = "person"
        BOT = "bot"

    class Involvement(models.TextChoices):
        """When a bot speaks without being mentioned (as Campfire's room involvement)."""

        MENTIONS = "mentions"  # only when @mentioned, or in a one-person conversation with it
        EVERYTHING = "everything"  # every person's message in the house's threads

    id = models.CharField(primary_key=True, max_length=32, default=new_agent_id, editable=False)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="agent",
    )
    house = models.ForeignKey(
        House, null=True, blank=True, on_delete=models.CASCADE, related_name="bots"
    )
    display_name = models.CharField(max_length=100)
    handle = models.CharField(max_length=32, validators=[handle_validator])
    provider = models.CharField(max_length=64, blank=True, help_text="Pi provider name")
    model = models.CharField(max_length=128, blank=True, help_text="Pi model id")
    instructions = models.TextField(blank=True)
    api_key_env = models.CharField(
        max_length=64,
        blank=True,
        help_text="Name of the environment variable that holds the provider key.",
    )
    involvement = models.CharField(
        max_length=16, choices=Involvement.choices, default=Involvement.MENTIONS
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(kind="person", user__isnull=False, house__isnull=True))
                | Q(kind="bot", user__isnull=True, house__isnull=False),
                name="agent_person_or_bot",
            ),
            models.UniqueConstraint(
                fields=["handle"], condition=Q(kind="person"), name="person_handle_unique"
            ),
            models.UniqueConstraint(
                fields=["house", "handle"], condition=Q(kind="bot"), name="bot_handle_per_house"
            ),
        ]

    def __str__(self):
        return f"{self.display_name} (@{self.handle})"

    @property
    def is_bot(self) -> bool:
        return self.kind == self.Kind.BOT

    def clean(self):
        super().clean()
        try:
            check_display_name(self.display_name)
        except ValidationError as exc:
            raise ValidationError({"display_name": exc.messages}) from None
        # Checked when a handle is given, not on every save: a clash already in old data
        # mustn't stop an owner from changing a bot's other settings.
        kept = Agent.objects.filter(pk=self.pk, handle=self.handle, house_id=self.house_id)
        if self._state.adding or not kept.exists():
            clash = handle_clash(self)
            if clash:
                raise ValidationError({"handle": clash})


def handle_clash(agent: Agent, house_id: int | None = None) -> str | None:
    """Why ``agent``'s handle can't be used in ``house_id`` (by default: every house it is
    in), or None. In a house one handle names one principal: a bot's handle is no member's
    and no other bot's, so a mention means one agent. (Bots among themselves are kept
    apart by ``bot_handle_per_house``; people by ``person_handle_unique``.)"""
    if not agent.handle:
        return None
    others = Agent.objects.filter(handle=agent.handle).exclude(pk=agent.pk)
    if agent.house_id is not None:  # a bot
        house_id = agent.house_id
        people = others.filter(kind=Agent.Kind.PERSON, user__memberships__house_id=house_id)
        if people.exists():
            return f"@{agent.handle} is already a member's handle in this house."
        return None
    if agent.user_id is None:
        return None
    houses = (
        [house_id]
        if house_id is not None
        else Membership.objects.filter(user_id=agent.user_id).values("house_id")
    )
    bot = others.filter(kind=Agent.Kind.BOT, house_id__in=houses).select_related("house").first()
    if bot is not None:
        return f"@{agent.handle} is the handle of a bot in {bot.house.name}."
    return None


TOKEN_PREFIX = "arbe_"


def token_digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A person's API token. Only its SHA-256 digest is kept."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"{self.name} ({self.user})"

    @classmethod
    def issue(cls, user, name: str) -> tuple["ApiToken", str]:
        """Create a token and return it with its raw value, shown to the person once."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        return cls.objects.create(user=user, name=name, digest=token_digest(raw)), raw

    def revoke(self) -> None:
        """Stop accepting the token; the row stays, so its use stays on record."""
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])


INVITE_DAYS = {1: "1 day", 7: "7 days", 30: "30 days"}


class HouseInvite(models.Model):
    """A link that lets people join a house until it expires or an owner revokes it.

    Only the token's SHA-256 digest is kept; the link is shown to its maker once.
    """

    house = models.ForeignKey(House, on_delete=models.CASCADE, related_name="invites")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    # The token's first characters (houses.invite_limits): lets a real invitee in while
    # guesses from the same address are refused. 24 of the token's 128 bits.
    token_prefix = models.CharField(max_length=8, blank=True, default="", editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    joined_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"invite to {self.house} (expires {self.expires_at:%Y-%m-%d %H:%M})"

    @property
    def is_usable(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()


class PendingEmail(models.Model):
    """An address a person asked for and hasn't confirmed yet (houses.email_address).

    ``User.email`` holds only confirmed addresses; this row holds the one waiting for its
    link. ``nonce`` is in every link sent for it: confirming deletes the row, so a link
    works once, and asking for another address makes a new nonce, so older links stop.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pending_email"
    )
    address = models.EmailField()
    nonce = models.CharField(max_length=32, editable=False)
    requested_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.address} (waiting for {self.user})"
