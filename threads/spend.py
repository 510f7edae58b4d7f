"""Spend: model usage and its cost, read from Pi's ``usage`` and added up."""

from __future__ import annotations

from threads import entries as E

SPEND_FIELDS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")


def usage_spend(usage) -> E.Spend | None:
    """Pi's ``usage`` as ``Spend``; None when it isn't the shape Pi writes."""
    if not isinstance(usage, dict):
        return None
    try:
        counts = {f: int(usage.get(f) or 0) for f in SPEND_FIELDS}
        cost = usage.get("cost")
        total = float(cost.get("total") or 0.0) if isinstance(cost, dict) else 0.0
    except (TypeError, ValueError):
        return None
    if any(v < 0 for v in counts.values()) or total < 0:
        return None
    return E.Spend(**counts, costUsd=total)


def add_spend(a: E.Spend, b: E.Spend) -> E.Spend:
    return E.Spend(
        **{f: getattr(a, f) + getattr(b, f) for f in SPEND_FIELDS}, costUsd=a.costUsd + b.costUsd
    )


def max_spend(a: E.Spend, b: E.Spend) -> E.Spend:
    return E.Spend(
        **{f: max(getattr(a, f), getattr(b, f)) for f in SPEND_FIELDS},
        costUsd=max(a.costUsd, b.costUsd),
    )
