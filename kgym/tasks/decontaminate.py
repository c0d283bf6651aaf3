"""Decontamination: how close a task's reference is to any problem of a KernelBench checkout.

Token-set Jaccard (identifiers and numbers) between a task's reference source and each problem file
under the checkout's `level*/` folders; a task whose nearest problem scores above the threshold
(0.6 by default) is rejected, so training never sees a near-copy of a benchmark problem. The
checkout is read at run time from the path the user gives; nothing of KernelBench ships with kgym.
Does not draw tasks: pass it the tasks to screen, and the rejected ids to `CurriculumConfig.exclude`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kgym.tasks.spec import TaskError
from kgym.tasks.task import Task

THRESHOLD = 0.6
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?")


def tokens(source: str) -> frozenset[str]:
    return frozenset(_TOKEN.findall(source))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def problem_files(kernelbench_dir: str | Path) -> list[Path]:
    """Problem files of a checkout: `<dir>/level*/*.py`, or `<dir>/KernelBench/level*/*.py`."""
    root = Path(kernelbench_dir)
    if not root.is_dir():
        raise TaskError(f"KernelBench checkout {str(root)!r} is not a directory")
    for base in (root, root / "KernelBench"):
        files = sorted(base.glob("level*/*.py"))
        if files:
            return files
    raise TaskError(f"{root}: no level*/*.py problem files (point at a KernelBench checkout)")


@dataclass(frozen=True)
class Overlap:
    task_id: str
    stage: str
    seed: int
    problem: str  # path of the nearest problem, relative to the checkout
    score: float
    rejected: bool


class Decontaminator:
    def __init__(self, kernelbench_dir: str | Path, threshold: float = THRESHOLD):
        if not 0.0 < threshold <= 1.0:
            raise TaskError("threshold must be in (0, 1]")
        self.root = Path(kernelbench_dir)
        self.threshold = threshold
        self.problems = [(str(p.relative_to(self.root)), tokens(p.read_text(errors="replace")))
                         for p in problem_files(kernelbench_dir)]

    def check(self, task: Task) -> Overlap:
        mine = tokens(task.reference)
        name, score = max(((n, jaccard(mine, t)) for n, t in self.problems), key=lambda x: x[1])
        return Overlap(task.task_id, task.spec.stage, task.spec.seed, name, round(score, 4), score > self.threshold)

    def rejected_ids(self, tasks: list[Task]) -> list[str]:
        """Task ids with at least one instance above the threshold (for `CurriculumConfig.exclude`)."""
        return sorted({o.task_id for o in map(self.check, tasks) if o.rejected})
