"""The mode mix: which groups run single-turn and which run repair (the study: 25% / 75%).

The mode is drawn per group, not per answer, so the G answers of a group share one prompt. The draw
is a hash of (seed, group key): deterministic, independent of order and of how work is spread over
workers, and about `single_fraction` of the groups overall. Does not run episodes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from kgym.contract import Mode

SINGLE_FRACTION = 0.25


@dataclass(frozen=True)
class ModeMix:
    single_fraction: float = SINGLE_FRACTION
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.single_fraction <= 1.0:
            raise ValueError("single_fraction must be in [0, 1]")

    def mode(self, group_key: str) -> Mode:
        """`Mode.SINGLE` or `Mode.REPAIR` for the group named `group_key` (e.g. a group id)."""
        h = hashlib.sha256(f"{self.seed}:{group_key}".encode()).digest()
        u = int.from_bytes(h[:8], "big") / 2.0**64
        return Mode.SINGLE if u < self.single_fraction else Mode.REPAIR
