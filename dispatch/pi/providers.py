"""Which Pi providers exist and where each one's key comes from.

Pi knows two kinds of provider: the built-in ones of its model catalogue (``openai``,
``anthropic``, …; their key is read from a conventional variable such as
``OPENAI_API_KEY``) and the ones the agent dir's ``models.json`` defines (``arbe-demo``,
an operator's own; ``apiKey`` is a literal or the name of a variable). Pi runs with a
scrubbed environment, so a bot works only if the variable it needs is set on the server
and handed to it: ``key_variable`` names it, ``config_problem`` says what is missing.

The built-in catalogue is read from the pinned Pi package's own files (the generated
model table and its env-key map), once per process.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

from dispatch.pi.config import PI_PACKAGE_DIR

PI_AI_DIST = PI_PACKAGE_DIR.parent / "pi-ai" / "dist"
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
# Providers Pi signs into another way (OAuth, cloud credentials): not usable from a server.
_PROVIDER_LINE = re.compile(r'^    "([a-z0-9-]+)": \{$', re.MULTILINE)
_ENV_LINE = re.compile(r'^\s+"?([a-z0-9-]+)"?: "([A-Z][A-Z0-9_]*)",$', re.MULTILINE)
_SPECIAL_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "github-copilot": "GH_TOKEN"}


def _dist() -> Path:
    # node_modules may be a link to a shared install; the pi-ai package sits beside Pi's.
    for candidate in (PI_AI_DIST, PI_PACKAGE_DIR / "node_modules" / "@mariozechner" / "pi-ai"):
        if (candidate / "models.generated.js").exists():
            return candidate
        if (candidate / "dist" / "models.generated.js").exists():
            return candidate / "dist"
    return PI_AI_DIST


@functools.cache
def builtin_providers() -> frozenset[str]:
    try:
        text = (_dist() / "models.generated.js").read_text()
    except OSError:
        return frozenset()
    return frozenset(_PROVIDER_LINE.findall(text))


@functools.cache
def builtin_key_variables() -> dict[str, str]:
    try:
        text = (_dist() / "env-api-keys.js").read_text()
    except OSError:
        text = ""
    return {**dict(_ENV_LINE.findall(text)), **_SPECIAL_KEYS}


def agent_dir_providers(agent_dir: Path | None) -> dict[str, dict]:
    """The providers ``models.json`` in ``agent_dir`` defines (empty when there is none)."""
    if agent_dir is None:
        return {}
    try:
        data = json.loads((Path(agent_dir) / "models.json").read_text())
    except (OSError, ValueError):
        return {}
    providers = data.get("providers") if isinstance(data, dict) else None
    return providers if isinstance(providers, dict) else {}


def key_variable(provider: str, api_key_env: str, agent_dir: Path | None) -> str | None:
    """The variable the bot's key is read from: its own setting, else the provider's."""
    if api_key_env:
        return api_key_env
    custom = agent_dir_providers(agent_dir).get(provider)
    if isinstance(custom, dict):
        key = str(custom.get("apiKey") or "")
        return key if ENV_NAME.match(key) else None  # a literal key needs no variable
    return builtin_key_variables().get(provider)


def config_problem(
    provider: str, api_key_env: str, agent_dir: Path | None, environ=os.environ
) -> tuple[str, str] | None:
    """What keeps a bot on ``provider`` from answering, as ``(field, message)``; None if fine.

    An empty provider is no problem here: the bot is simply not configured yet.
    """
    if not provider:
        return None
    custom = agent_dir_providers(agent_dir)
    if provider not in custom and provider not in builtin_providers():
        return "provider", f"Pi has no provider {provider!r}"
    variable = key_variable(provider, api_key_env, agent_dir)
    if variable is None and provider not in custom:
        return "api_key_env", f"name the variable that holds the key for {provider}"
    if variable is not None and not environ.get(variable):
        return "api_key_env", f"no API key for {provider}: {variable} is not set on the server"
    return None
