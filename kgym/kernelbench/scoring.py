"""fast_p tables with figures.json's keys: per model, per level and overall.

For a set of answers (one per problem), with n the number of problems (failures stay in the
denominator):
- `compiled`, `correct`: counts of answers that compiled / passed every hidden case.
- `eager_fast_p`, `compile_fast_p` (p = 1, 1.5, 2): correct and strictly faster than p times the
  baseline (speedup > p) — eager PyTorch or torch.compile(max-autotune).
- `flags`: correct answers with a speedup above 10x on either baseline (timing artefacts or
  loopholes until someone has looked); `*_fast_1_unflagged` leaves them out.
`strategy` gives, per level, the hybrid split of figures.json's `level2_strategy`: answers keeping a
PyTorch op (static AST), and unflagged eager fast_1 answers that are hybrid or pure Triton.
Covers counting one sample per problem; `multisample.py` averages over samples, `comparison.py`
compares two models.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from kgym.kernelbench.checkout import KernelBenchError
from kgym.kernelbench.results import ProblemResult

FLAG_SPEEDUP = 10.0
THRESHOLDS = (("1", 1.0), ("1.5", 1.5), ("2", 2.0))
METRIC_KEYS = ("n", "compiled", "correct", *(f"eager_fast_{p}" for p, _ in THRESHOLDS),
               *(f"compile_fast_{p}" for p, _ in THRESHOLDS), "flags", "eager_fast_1_unflagged",
               "compile_fast_1_unflagged")
STRATEGY_KEYS = ("answers_keeping_pytorch_op", "fast_unflagged_hybrid", "fast_unflagged_pure_triton")


def flagged(r: ProblemResult) -> bool:
    return r.correct and any(s is not None and s > FLAG_SPEEDUP for s in (r.speedup_eager, r.speedup_compile))


def fast(r: ProblemResult, baseline: str, p: float = 1.0) -> bool:
    s = r.speedup_eager if baseline == "eager" else r.speedup_compile
    return r.correct and s is not None and s > p


def score_level(results: Sequence[ProblemResult]) -> dict[str, int]:
    """One row of figures.json's `levels` for these answers (one per problem)."""
    out = {"n": len(results), "compiled": sum(r.compiled for r in results),
           "correct": sum(r.correct for r in results)}
    for base in ("eager", "compile"):
        for name, p in THRESHOLDS:
            out[f"{base}_fast_{name}"] = sum(fast(r, base, p) for r in results)
    out["flags"] = sum(flagged(r) for r in results)
    for base in ("eager", "compile"):
        out[f"{base}_fast_1_unflagged"] = sum(fast(r, base) and not flagged(r) for r in results)
    return {k: out[k] for k in METRIC_KEYS}


def strategy_level(results: Sequence[ProblemResult]) -> dict[str, int]:
    fast_unflagged = [r for r in results if fast(r, "eager") and not flagged(r)]
    return {"answers_keeping_pytorch_op": sum(r.keeps_torch_op for r in results),
            "fast_unflagged_hybrid": sum(r.keeps_torch_op for r in fast_unflagged),
            "fast_unflagged_pure_triton": sum(not r.keeps_torch_op for r in fast_unflagged)}


def _one_per_problem(results: Iterable[ProblemResult], sample: int | None) -> dict[str, list[ProblemResult]]:
    by_model: dict[str, dict[tuple[int, int], ProblemResult]] = defaultdict(dict)
    for r in results:
        if sample is not None and r.sample != sample:
            continue
        if r.key in by_model[r.model]:
            raise KernelBenchError(f"model {r.model!r} has several answers for level {r.level} problem "
                                   f"{r.problem_id}: pick one sample (sample=...) or use multi_sample")
        by_model[r.model][r.key] = r
    return {m: sorted(d.values(), key=lambda r: r.key) for m, d in sorted(by_model.items())}


def _by_level(results: Sequence[ProblemResult]) -> dict[str, list[ProblemResult]]:
    levels: dict[str, list[ProblemResult]] = {"overall": list(results)}
    for r in results:
        levels.setdefault(str(r.level), []).append(r)
    return levels


def score(results: Iterable[ProblemResult], *, sample: int | None = None) -> dict[str, dict]:
    """`{"models": {model: {"levels": {"overall": {...}, "1": {...}, ...}, "strategy": {"1": {...}}}}}`."""
    models = {}
    for model, rs in _one_per_problem(results, sample).items():
        levels = _by_level(rs)
        models[model] = {"levels": {k: score_level(v) for k, v in levels.items()},
                         "strategy": {k: strategy_level(v) for k, v in levels.items() if k != "overall"}}
    return {"models": models}


def strategy(results: Iterable[ProblemResult], *, sample: int | None = None) -> dict[str, dict]:
    """figures.json's `level2_strategy` shape: `{model: {level: {STRATEGY_KEYS...}}}`."""
    return {m: v["strategy"] for m, v in score(results, sample=sample)["models"].items()}


def format_table(table: dict[str, dict]) -> str:
    """A plain-text table of `score(...)` for the terminal."""
    short = ("n", "comp", "corr", "e>1", "e>1.5", "e>2", "c>1", "c>1.5", "c>2", "flags", "e>1 unfl", "c>1 unfl")
    head = f"{'model':<16} {'level':<8}" + "".join(f"{h:>9}" for h in short)
    lines = [head, "-" * len(head)]
    for model, entry in table["models"].items():
        for level, row in entry["levels"].items():
            lines.append(f"{model:<16} {level:<8}" + "".join(f"{row[k]:>9}" for k in METRIC_KEYS))
    return "\n".join(lines)
