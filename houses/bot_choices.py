"""What the add-bot form offers: the providers this server can run and their models, the key
variable each would take (by the rule of ``dispatch.pi.keys``), and the demo bot.

An owner of a new house should not have to know Pi's provider names or guess the key rule:
the form lists this server's own providers (the agent dir's ``models.json``: the demo model,
an operator's) first, then Pi's built-in ones that take a key from a variable. Nothing here
says which variables are set on the server; the hint is the naming rule only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings

from dispatch.pi.config import DEMO_MODEL, DEMO_PROVIDER
from dispatch.pi.keys import ALLOW_SETTING
from dispatch.pi.providers import (
    agent_dir_models,
    builtin_key_variables,
    builtin_models,
    key_plan,
)

# Pi signs into these another way (a GitHub login): not usable from a server.
NOT_FROM_A_SERVER = frozenset({"github-copilot"})
# The demo house's bot (manage.py seed_demo), offered in one click to a house with no bot.
DEMO_BOT = {
    "handle": "helper",
    "display_name": "Helper (demo model)",
    "provider": DEMO_PROVIDER,
    "model": DEMO_MODEL,
    "instructions": "You are a helpful assistant in a shared thread.",
}


@dataclass(frozen=True)
class ProviderChoice:
    name: str
    models: tuple[str, ...]
    own: bool  # defined by this server's agent dir, not Pi's catalogue
    needs_key: bool  # a key variable must be named (no literal key in models.json)
    suggested_key: str  # a name the key rule accepts, for the placeholder


def suggested_key(provider: str) -> str:
    """A key variable name the rule accepts: the prefix and the provider's name."""
    tail = re.sub(r"[^A-Z0-9]+", "_", provider.upper()).strip("_")
    prefix = settings.ARBE_BOT_KEY_PREFIX
    return f"{prefix}{tail}" if prefix else ""


def provider_choices(agent_dir) -> list[ProviderChoice]:
    own = agent_dir_models(agent_dir)
    keys = builtin_key_variables()
    choices = [
        ProviderChoice(
            name,
            models,
            True,
            key_plan(name, "", agent_dir)[0] is not None,
            suggested_key(name),
        )
        for name, models in sorted(own.items())
    ]
    choices += [
        ProviderChoice(name, models, False, True, suggested_key(name))
        for name, models in sorted(builtin_models().items())
        if name in keys and name not in own and name not in NOT_FROM_A_SERVER
    ]
    return choices


def key_rule() -> str:
    """The naming rule, said to an owner."""
    prefix = settings.ARBE_BOT_KEY_PREFIX
    listed = f"or be listed in {ALLOW_SETTING}"
    start = f"start with {prefix} " if prefix else ""
    return (
        f"The name of a server variable holding the provider's API key; it must {start}{listed}. "
        "Ask whoever runs this server to set it. Not needed for this server's own providers."
    )


def form_data(agent_dir) -> dict:
    """For ``json_script``: each provider's models and suggested key variable."""
    return {
        c.name: {"models": list(c.models), "key": c.suggested_key if c.needs_key else ""}
        for c in provider_choices(agent_dir)
    }


def demo_bot_offered(house, agent_dir) -> bool:
    """A house with no bot yet, on a server that runs the demo model, and no ``@helper``."""
    if DEMO_PROVIDER not in agent_dir_models(agent_dir):
        return False
    return (
        not house.bots.filter(active=True).exists()
        and not house.bots.filter(handle=DEMO_BOT["handle"]).exists()
    )
