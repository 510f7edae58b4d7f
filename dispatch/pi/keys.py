"""Which server variables a bot may take its provider key from.

A bot's key variable is chosen by a house owner, and its value is copied into the bot's
process, where the bot's tools can print it. So the name must be one the operator set
aside for bots: it starts with ``ARBE_BOT_KEY_PREFIX`` (default ``ARBE_BOTKEY_``) or is
listed in ``ARBE_BOT_KEY_ALLOW``. The server's own settings (every variable
``arbe_site/settings.py`` reads, and the few read elsewhere) are refused whatever the
prefix or the list say, and so are the names of Pi's own environment.

The rule looks at the name only: whether a variable exists is never part of an answer given
when a bot is configured.
"""

from __future__ import annotations

from django.conf import settings

from arbe_lib import env

# Read outside the settings module: the demo passwords (seed_demo), the CLI's token and
# address, Django's own; the stream secret and the like again, should settings be bypassed.
OTHER_SERVER_VARIABLES = frozenset(
    {
        "ARBE_DEMO_OWNER_PASSWORD",
        "ARBE_DEMO_MEMBER_PASSWORD",
        "ARBE_DEMO_ADMIN_PASSWORD",
        "ARBE_TOKEN",
        "ARBE_URL",
        "DJANGO_SETTINGS_MODULE",
        "DURABLE_STREAMS_SECRET",
        "SECRET_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "DEMO_MODEL_SECRET",
        "POSTHOG_API_KEY",
    }
)
# Pi's environment (dispatch/pi/sandbox.py): a key must not replace any of it.
PI_VARIABLES = frozenset(
    {
        "PATH",
        "HOME",
        "LANG",
        "PI_CODING_AGENT_DIR",
        "PI_OFFLINE",
        "PI_TELEMETRY",
        "PI_SKIP_VERSION_CHECK",
    }
)
ALLOW_SETTING = "ARBE_BOT_KEY_ALLOW"


def server_variables() -> frozenset[str]:
    """Every variable the server reads for itself (upper-cased)."""
    settings.ARBE_BOT_KEY_PREFIX  # noqa: B018 - the settings are loaded, so READ is complete
    return frozenset(name.upper() for name in env.READ | OTHER_SERVER_VARIABLES | PI_VARIABLES)


def is_server_variable(name: str) -> bool:
    return name.upper() in server_variables()


def name_problem(name: str) -> str | None:
    """Why a bot may not take its key from ``name``; None when it may."""
    if is_server_variable(name):
        return f"{name} is one of the server's own settings, which no bot may read"
    prefix = settings.ARBE_BOT_KEY_PREFIX
    if (prefix and name.startswith(prefix)) or name in settings.ARBE_BOT_KEY_ALLOW:
        return None
    rule = f"be listed in {ALLOW_SETTING}"
    if prefix:
        rule = f"start with {prefix} or {rule}"
    return f"{name} is not a bot key variable (its name must {rule})"
