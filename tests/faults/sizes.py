"""How big each fault's run is: ``full`` (``make faults``, the figures in
docs/reliability.md) or ``ci`` (``.ci/run``: every fault on every commit, smaller, so the
whole check stays well within CI's time). Chosen by ``ARBE_FAULTS_SIZE``."""

import os

SIZE = os.environ.get("ARBE_FAULTS_SIZE", "full")
if SIZE not in ("full", "ci"):
    raise ValueError(f"ARBE_FAULTS_SIZE is 'full' or 'ci', not {SIZE!r}")


def sized(full: int, ci: int) -> int:
    """``full`` for a full run, ``ci`` for CI's."""
    return ci if SIZE == "ci" else full
