"""Stage 4 of the funnel: drop modules too close to a KernelBench problem.

The measure is `kgym.tasks.decontaminate`'s token-set Jaccard (identifiers and numbers) between the
row's module as written (its `python_code`, before kgym's normalisation adds its own names) and
each problem file of the chosen levels of a KernelBench checkout; a module whose nearest problem
scores above the threshold (0.6, the study's) is dropped. The checkout is the user's: nothing of
KernelBench ships with kgym. Does not decontaminate gym tasks (they are procedural).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgym.tasks.decontaminate import THRESHOLD, jaccard, problem_files, tokens


@dataclass(frozen=True)
class Nearest:
    problem: str  # path of the nearest problem, relative to the checkout
    score: float
    contaminated: bool


class Contamination:
    def __init__(self, kernelbench_dir: str | Path, levels: tuple[int, ...] = (1, 2), threshold: float = THRESHOLD):
        if not 0.0 < threshold <= 1.0:
            raise ValueError("the Jaccard threshold must be in (0, 1]")
        root = Path(kernelbench_dir)
        wanted = {f"level{n}" for n in levels}
        files = [p for p in problem_files(root) if p.parent.name in wanted]
        if not files:
            raise ValueError(f"{root}: no problem files in levels {list(levels)}")
        self.threshold = threshold
        self.problems = [(str(p.relative_to(root)), tokens(p.read_text(errors="replace"))) for p in files]
        self._cache: dict[str, Nearest] = {}

    def nearest(self, source: str, key: str | None = None) -> Nearest:
        """The closest problem to `source`; `key` (the module key) caches the answer per module."""
        if key is not None and key in self._cache:
            return self._cache[key]
        mine = tokens(source)
        name, score = max(((n, jaccard(mine, t)) for n, t in self.problems), key=lambda x: x[1])
        found = Nearest(name, round(score, 4), score > self.threshold)
        if key is not None:
            self._cache[key] = found
        return found
