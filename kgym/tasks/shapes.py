"""Drawing shapes from a task's seed: element budgets per size, awkward dimensions.

Full-size tasks span 1M-32M elements so that a kernel's time reflects memory bandwidth, not launch
jitter (the study's v6 lesson: on ~300K-element tensors torch.compile's overhead made any kernel look
6-9x faster). Dimensions are biased towards awkward values (2^k - 1, 2^k + 1, primes) so masks and
tails are always exercised. Does not know any operation: families call these helpers.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from kgym.tasks.spec import TaskError


@dataclass(frozen=True)
class Budget:
    """How many elements the task's main tensor may hold."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        if not 1 <= self.lo <= self.hi:
            raise TaskError(f"bad element budget [{self.lo}, {self.hi}]")


BUDGETS = {
    "full": Budget(1 << 20, 32 << 20),
    "small": Budget(1 << 16, 1 << 20),
    "tiny": Budget(512, 4096),
}
_DOWN = {"full": "small", "small": "tiny", "tiny": "tiny"}


def budget_for(size: str, stage: str) -> Budget:
    """The `small` stage is one size down from the size asked for (tiny stays tiny)."""
    return BUDGETS[_DOWN[size] if stage == "small" else size]


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    return all(n % d for d in range(3, math.isqrt(n) + 1, 2))


def _prime_near(n: int, lo: int, hi: int) -> int | None:
    for d in range(0, max(hi - lo, 0) + 1):
        for c in (n - d, n + d):
            if lo <= c <= hi and is_prime(c):
                return c
    return None


def dim(rng: random.Random, lo: int, hi: int, awkward: float = 0.6) -> int:
    """An integer in [lo, hi], log-uniform, made awkward (2^k +- 1 or a prime) with probability
    `awkward`; otherwise a round multiple of 16 where one fits."""
    if not 1 <= lo <= hi:
        raise TaskError(f"impossible dimension range [{lo}, {hi}]")
    base = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))
    base = min(max(base, lo), hi)
    if rng.random() < awkward:
        kind = rng.choice(("pow2-1", "pow2+1", "prime"))
        if kind == "prime":
            p = _prime_near(base, lo, hi)
            if p is not None:
                return p
        else:
            k = max(1, round(math.log2(max(base, 2))))
            c = (1 << k) + (1 if kind == "pow2+1" else -1)
            if lo <= c <= hi:
                return c
    round16 = base - base % 16
    return round16 if round16 >= lo and round16 > 0 else base


def rows_cols(rng: random.Random, budget: Budget, cols_lo: int, cols_hi: int) -> tuple[int, int]:
    """A (rows, cols) pair whose product lies in the budget, cols in [cols_lo, cols_hi]."""
    cols_hi = min(cols_hi, budget.hi)
    cols_lo = min(cols_lo, cols_hi)
    cols = dim(rng, cols_lo, cols_hi)
    rows = dim(rng, max(1, -(-budget.lo // cols)), max(1, budget.hi // cols))
    return rows, cols


def distribution(rng: random.Random) -> dict[str, float]:
    """The input recipe's scale and shift (inputs are randn * scale + shift). The hidden cases then
    scale, negate and take |x| of whatever this draws."""
    return {"scale": rng.choice((0.5, 1.0, 1.0, 2.0, 4.0)), "shift": rng.choice((0.0, 0.0, 0.0, 0.5, -0.25))}
