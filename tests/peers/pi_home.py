"""A Pi agent dir for tests, written by the app's own ``write_agent_dir``: one provider,
``fakellm``, pointing at a loopback fake; Pi's retries and compaction off."""

from __future__ import annotations

from pathlib import Path

from dispatch.pi.config import PLAIN_COMPAT, ModelCost, PiModel, PiProvider, write_agent_dir
from tests.peers.fake_llm import MODEL, PROVIDER

# Priced like a mid-size model so spend has non-zero cost to add up.
COST = ModelCost(input=3.0, output=15.0, cacheRead=0.3, cacheWrite=3.75)


def fake_provider(base_url: str) -> PiProvider:
    return PiProvider(
        baseUrl=base_url,
        apiKey="sk-fake",
        api="openai-completions",
        compat=PLAIN_COMPAT,
        models=[PiModel(id=MODEL, contextWindow=32_000, maxTokens=1024, cost=COST)],
    )


def write_pi_home(path: Path, base_url: str) -> Path:
    """Write the agent dir at ``path`` for a fake model served at ``base_url`` (``…/v1``)."""
    return write_agent_dir(path, {PROVIDER: fake_provider(base_url)})
