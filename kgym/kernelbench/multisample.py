"""Multi-sample evaluation: k seeded samples per problem, the mean and spread of every metric.

The study's recommendation: one greedy sample per problem is too noisy to separate checkpoints that
differ by 1-3 problems; score each sample as its own pass over the problems and report the mean and
the sample standard deviation across passes. Covers aggregating results that carry a `sample`
index; generating the samples is the generator's job (`build_prompts(..., samples=k)` hands out
one seed per sample).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from kgym.kernelbench.results import ProblemResult
from kgym.kernelbench.scoring import METRIC_KEYS, score


def multi_sample(results: Iterable[ProblemResult]) -> dict[str, dict]:
    """`{"models": {model: {"samples": k, "levels": {level: {metric: {"mean", "std", "min", "max",
    "values"}}}}}}`, one value per sample pass (std is 0 for one sample)."""
    results = list(results)
    samples = sorted({r.sample for r in results})
    per_sample = {s: score(results, sample=s)["models"] for s in samples}
    values: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for s in samples:
        for model, entry in per_sample[s].items():
            for level, row in entry["levels"].items():
                for k in METRIC_KEYS:
                    values[model][level][k].append(row[k])
    out = {}
    for model, levels in sorted(values.items()):
        k = len(next(iter(levels.values()))["n"])
        table = {}
        for level, metrics in levels.items():
            table[level] = {}
            for name, vals in metrics.items():
                arr = np.asarray(vals, dtype=float)
                std = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
                table[level][name] = {"mean": float(arr.mean()), "std": std, "min": float(arr.min()),
                                      "max": float(arr.max()), "values": [int(v) for v in vals]}
        out[model] = {"samples": k, "levels": table}
    return {"models": out}
