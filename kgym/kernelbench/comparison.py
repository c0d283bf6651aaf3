"""Paired bootstrap between two KernelBench result sets on the same problems (figures.json's
`paired_bootstrap_vs_sft`): delta in percentage points, 95% interval, gained and lost counts, per
boolean metric (correct, fast over eager, fast over torch.compile: fast_1). The statistic is
`kgym.bootstrap.paired_bootstrap` (one implementation for kgym), here with KernelBench's errors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kgym import bootstrap as _bootstrap
from kgym.bootstrap import RESAMPLES, SEED, BootstrapResult
from kgym.kernelbench.checkout import KernelBenchError
from kgym.kernelbench.results import ProblemResult
from kgym.kernelbench.scoring import fast

__all__ = ["METRICS", "RESAMPLES", "SEED", "BootstrapResult", "compare", "paired_bootstrap"]

# figures.json's metric names -> what counts as solved
METRICS: dict[str, Callable[[ProblemResult], bool]] = {
    "correct": lambda r: r.correct,
    "fast_eager": lambda r: fast(r, "eager"),
    "fast_compile": lambda r: fast(r, "compile"),
}


def paired_bootstrap(a: Sequence[bool], b: Sequence[bool], *, resamples: int = RESAMPLES,
                     seed: int = SEED) -> BootstrapResult:
    """Delta (b - a) in percentage points with its 95% paired-bootstrap interval, over booleans."""
    try:
        return _bootstrap.paired_bootstrap([bool(x) for x in a], [bool(x) for x in b], resamples=resamples,
                                           seed=seed)
    except ValueError as e:
        raise KernelBenchError(str(e)) from e


def _index(results: Iterable[ProblemResult], which: str) -> dict[tuple[int, int], ProblemResult]:
    out: dict[tuple[int, int], ProblemResult] = {}
    for r in results:
        if r.key in out:
            raise KernelBenchError(f"{which}: several answers for level {r.level} problem {r.problem_id} "
                                   f"(one model and one sample per side)")
        out[r.key] = r
    return out


def compare(a: Iterable[ProblemResult], b: Iterable[ProblemResult], *, resamples: int = RESAMPLES,
            seed: int = SEED, metrics: Sequence[str] = tuple(METRICS)) -> dict[str, BootstrapResult]:
    """b against a on the same problems, per metric. Problem sets that differ are an error."""
    ia, ib = _index(a, "A"), _index(b, "B")
    if set(ia) != set(ib):
        only_a, only_b = sorted(set(ia) - set(ib)), sorted(set(ib) - set(ia))
        raise KernelBenchError(f"the two result sets cover different problems: only in A {only_a[:10]}, "
                               f"only in B {only_b[:10]}")
    keys = sorted(ia)
    out = {}
    for name in metrics:
        solved = METRICS[name]
        out[name] = paired_bootstrap([solved(ia[k]) for k in keys], [solved(ib[k]) for k in keys],
                                     resamples=resamples, seed=seed)
    return out
