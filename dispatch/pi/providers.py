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
from dispatch.pi.keys import is_server_variable, name_problem

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


_MODEL_LINE = re.compile(r'^        "([^"\n]+)": \{$', re.MULTILINE)


@functools.cache
def builtin_models() -> dict[str, tuple[str, ...]]:
    """``{provider: model ids}`` of Pi's built-in catalogue, in its own order."""
    try:
        text = (_dist() / "models.generated.js").read_text()
    except OSError:
        return {}
    out: dict[str, tuple[str, ...]] = {}
    starts = [(m.start(), m.group(1)) for m in _PROVIDER_LINE.finditer(text)]
    for i, (start, provider) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        out[provider] = tuple(_MODEL_LINE.findall(text, start, end))
    return out


def agent_dir_models(agent_dir: Path | None) -> dict[str, tuple[str, ...]]:
    """``{provider: model ids}`` that ``models.json`` in ``agent_dir`` defines."""
    out = {}
    for name, provider in agent_dir_providers(agent_dir).items():
        models = provider.get("models") if isinstance(provider, dict) else None
        ids = [m.get("id") for m in models or () if isinstance(m, dict)]
        out[name] = tuple(i for i in ids if isinstance(i, str) and i)
    return out


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


def key_plan(
    provider: str, api_key_env: str, agent_dir: Path | None
) -> tuple[str | None, str | None]:
    """Where the bot's key comes from and under which name Pi reads it: ``(source, target)``.

    ``source`` is the server variable (the bot's ``api_key_env``, else the provider's own:
    ``OPENAI_API_KEY`` for ``openai``, a ``models.json`` ``apiKey`` that names a variable);
    ``target`` is the variable Pi looks in (the provider's own, else the source). A
    ``models.json`` provider with a literal key and no ``api_key_env`` needs neither.
    """
    custom = agent_dir_providers(agent_dir).get(provider)
    if isinstance(custom, dict):
        declared = str(custom.get("apiKey") or "")
        own = declared if ENV_NAME.match(declared) else None
    else:
        own = builtin_key_variables().get(provider)
    source = api_key_env or own
    return source, own or source


def setting_problem(
    provider: str, api_key_env: str, agent_dir: Path | None
) -> tuple[str, str] | None:
    """What is wrong with a bot's settings, judged on names only, as ``(field, message)``.

    Whether the key variable is set on the server is not looked at: the answer must not
    tell an owner which variables exist. An empty provider is no problem: the bot is simply
    not configured yet.
    """
    if not provider:
        return None
    custom = agent_dir_providers(agent_dir)
    if provider not in custom and provider not in builtin_providers():
        return "provider", f"Pi has no provider {provider!r}"
    source, target = key_plan(provider, api_key_env, agent_dir)
    if source is None:
        if provider in custom:
            return None  # a literal key in models.json
        return "api_key_env", f"name the variable that holds the key for {provider}"
    refused = name_problem(source)
    if refused and not api_key_env:
        return "api_key_env", f"name a key variable for {provider}: {refused}"
    if refused:
        return "api_key_env", refused
    if target and is_server_variable(target):
        return "provider", f"{provider} reads its key from {target}, a server setting"
    return None


def config_problem(
    provider: str, api_key_env: str, agent_dir: Path | None, environ=os.environ
) -> tuple[str, str] | None:
    """What keeps a bot on ``provider`` from answering now, as ``(field, message)``.

    Checked before Pi is started: the settings' rule again (a bot set before it, or an
    operator's changed list), then the key itself, in a sentence that names no variable.
    """
    problem = setting_problem(provider, api_key_env, agent_dir)
    if problem is not None and problem[1].startswith("Pi has no provider"):
        return problem
    if problem is not None:  # a key refused by the rule is no key, as the thread says
        return problem[0], f"no API key for {provider}: {problem[1]}"
    source, _ = key_plan(provider, api_key_env, agent_dir)
    if source is not None and not environ.get(source):
        return "api_key_env", f"no API key for {provider}"
    return None


def key_environment(
    provider: str, api_key_env: str, agent_dir: Path | None, environ=os.environ
) -> dict[str, str]:
    """The one variable a bot's Pi gets from the server: its key, under the name Pi reads;
    nothing when the rule refuses the source or the server lacks it."""
    if setting_problem(provider, api_key_env, agent_dir) is not None:
        return {}
    source, target = key_plan(provider, api_key_env, agent_dir)
    if source is None or target is None or not environ.get(source):
        return {}
    return {target: environ[source]}
