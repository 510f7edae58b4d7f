"""Where Pi lives and what it reads: the CLI path and the agent dir (``models.json``,
``settings.json``) that ``PI_CODING_AGENT_DIR`` points at.

Production and the tests write agent dirs with the same ``write_agent_dir``; only the
providers differ (the built-in ``arbe-demo`` model here, a loopback fake in the tests).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
from django.conf import settings

PI_PACKAGE_DIR = Path(settings.BASE_DIR) / "node_modules" / "@mariozechner" / "pi-coding-agent"
PI_CLI = PI_PACKAGE_DIR / "dist" / "cli.js"

DEMO_PROVIDER = "arbe-demo"
DEMO_MODEL = "demo"


class ModelCost(msgspec.Struct):
    """Prices in USD per million tokens; Pi computes ``usage.cost`` from them."""

    input: float = 0.0
    output: float = 0.0
    cacheRead: float = 0.0
    cacheWrite: float = 0.0


class PiModel(msgspec.Struct, omit_defaults=True):
    id: str
    name: str | None = None
    contextWindow: int = 128_000
    maxTokens: int = 16_384
    reasoning: bool = False
    cost: ModelCost = msgspec.field(default_factory=ModelCost)


class PiProvider(msgspec.Struct, omit_defaults=True):
    """One ``models.json`` provider. ``apiKey`` is a literal or the name of an environment
    variable (Pi resolves either), so a bot's key can stay in its process environment."""

    baseUrl: str
    apiKey: str
    models: list[PiModel]
    api: str  # "openai-completions", "anthropic-messages", "openai-responses", …
    headers: dict[str, str] | None = None
    compat: dict[str, Any] | None = None


# Plain OpenAI-compatible servers (the demo model, the test fake) know neither the
# "developer" role nor reasoning_effort.
PLAIN_COMPAT = {"supportsDeveloperRole": False, "supportsReasoningEffort": False}


def demo_provider() -> PiProvider:
    """The built-in demo model, served by this site at ``/demo-model/v1``; it costs nothing.

    Its API key is the per-install ``DEMO_MODEL_SECRET``, the only credential the endpoint
    accepts (``models.json`` is written 0600). Pi takes a key that names an environment
    variable or starts with ``!`` as such; a ``token_urlsafe`` secret is neither."""
    return PiProvider(
        baseUrl=settings.ARBE_INTERNAL_URL + "/demo-model/v1",
        apiKey=settings.DEMO_MODEL_SECRET,
        api="openai-completions",
        compat=PLAIN_COMPAT,
        models=[
            PiModel(id=DEMO_MODEL, name="arbe demo model", contextWindow=32_000, maxTokens=1024)
        ],
    )


def pi_settings(*, retry: bool = False, compaction: bool = False) -> dict[str, Any]:
    """``settings.json``: arbe retries a failed reply itself, so Pi's own retries (and the
    OpenAI SDK's) are off by default; ``quietStartup`` keeps stderr free of banners."""
    return {
        "retry": {"enabled": retry, "provider": {"maxRetries": 2 if retry else 0}},
        "compaction": {"enabled": compaction},
        "quietStartup": True,
    }


def write_agent_dir(
    path: Path,
    providers: Mapping[str, PiProvider],
    *,
    retry: bool = False,
    compaction: bool = False,
) -> Path:
    """Write ``models.json`` and ``settings.json`` into ``path`` (created if missing).

    Each file is replaced atomically: a Pi process starting meanwhile reads the old file or
    the new one, never half of one.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    write_json(path / "models.json", {"providers": dict(providers)})
    write_json(path / "settings.json", pi_settings(retry=retry, compaction=compaction))
    return path


def write_json(target: Path, data: Any) -> None:
    content = msgspec.json.format(msgspec.json.encode(data), indent=2)
    with contextlib.suppress(OSError):
        if target.read_bytes() == content:
            return  # as it is: every reply writes its bot's files, most often unchanged
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(content)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
