"""The curriculum: sampling weights over families and stages, and the ladder that promotes operations.

Each operation climbs a ladder of its stages, assisted rungs first: scaffold or epilogue, then
small, then full. It is promoted when its solve rate on a rung (over the last `window` attempts, at
least `min_attempts` of them) reaches `promote_at`. Whatever the ladder says, a `floor_full` share
of all draws is the unassisted full-size task: the study's lesson 6.3 is that assisted variants open
the training signal on hard families but do not transfer to the benchmark unless the last stage is
the real, full, unassisted task. `set_floor_full` changes that share between draws (the RL job
weights it up in its final stage: `CurriculumConfig.floor_at`). `hybrid_families` (lesson 8.2) makes
every task of those families allow one cuBLAS/cuDNN call at every stage (answer mode hybrid: the
prompt says so and the verifier allows it). The state is plain data (`state_dict`), so a Ray actor
can checkpoint it. Does not verify or record anything: the caller reports outcomes with `record`.
"""

from __future__ import annotations

import dataclasses
import random
from collections import deque
from dataclasses import dataclass
from typing import Any

from kgym.settings import internal, option
from kgym.tasks.registry import FAMILIES, make, operations
from kgym.tasks.spec import SIZES, STAGES, TaskError
from kgym.tasks.task import Task

# Rung order: the most assisted first.
_RUNG_ORDER = ("scaffold", "epilogue", "small", "full")


def ladder(stages: tuple[str, ...]) -> list[str]:
    return [s for s in _RUNG_ORDER if s in stages]


# Lesson 8.2: the families whose full task is a level-2 module with a GEMM/conv at its core (the RL
# job's default `hybrid_families`: keep the library call, reward the fused tail).
HYBRID_FAMILIES = ("fused_hybrid", "gemm_epilogue")


@dataclass(frozen=True)
class CurriculumConfig:
    """[curriculum] of the RL job: the task ladder and the full-size floor's schedule (lesson 8.3)."""

    size: str = option("full", "task size: full (1M-32M elements, the study's), small, tiny (CPU)", choices=SIZES)
    family_weights: dict[str, float] = option(doc="family -> sampling weight (default 1 each; 0 leaves one out)",
                                              factory=dict)
    exclude: tuple[str, ...] = option((), "task ids never drawn (e.g. held out, decontaminated)")
    floor_full: float = option(0.25, "share of draws that are the unassisted full-size task, early stages", ge=0,
                               le=1)
    final_floor_full: float = option(0.6, "that share from final_stage_start on (lesson 8.3: the last stage "
                                     "weights unassisted full tasks up; floor_at)", ge=0, le=1)
    final_stage_start: float = option(0.67, "fraction of the steps after which the final stage begins", ge=0, le=1)
    promote_at: float = option(0.5, "solve rate on a rung that promotes an operation", gt=0, le=1)
    window: int = option(16, "attempts remembered per (task, stage)", ge=1)
    min_attempts: int = option(8, "attempts on a rung before it can promote", ge=1)
    hybrid_families: tuple[str, ...] = option((), "families whose tasks allow one cuBLAS/cuDNN call at every stage "
                                              "(lesson 8.2; the RL job's default: HYBRID_FAMILIES)")
    seed: int = option(0, "seed of the curriculum's draws", ge=0)
    stage_weights: dict[str, float] = internal(doc="stage -> sampling weight of the rungs below the current one",
                                               factory=lambda: {s: 1.0 for s in STAGES})
    current_boost: float = internal(4.0, "the current rung weighs this much more than the rungs below it")

    def floor_at(self, step: int, steps: int) -> float:
        """The full-size floor of step `step` (1-based) of `steps`."""
        return self.final_floor_full if step > self.final_stage_start * steps else self.floor_full

    def __post_init__(self) -> None:
        unknown = set(self.family_weights) - set(FAMILIES)
        if unknown:
            raise TaskError(f"unknown families in family_weights: {sorted(unknown)}; families: {', '.join(FAMILIES)}")
        if set(self.stage_weights) - set(STAGES):
            raise TaskError(f"stage_weights may only name {STAGES}")
        if any(w < 0 for w in [*self.family_weights.values(), *self.stage_weights.values()]):
            raise TaskError("sampling weights must be >= 0")
        if not 0.0 <= self.floor_full <= 1.0 or not 0.0 < self.promote_at <= 1.0:
            raise TaskError("floor_full must be in [0, 1] and promote_at in (0, 1]")
        if self.window < 1 or not 1 <= self.min_attempts <= self.window:
            raise TaskError("need window >= 1 and 1 <= min_attempts <= window")
        if not 0.0 <= self.final_floor_full <= 1.0 or not 0.0 <= self.final_stage_start <= 1.0:
            raise TaskError("final_floor_full and final_stage_start must be in [0, 1]")
        if self.size not in SIZES:
            raise TaskError(f"unknown size {self.size!r}; sizes: {', '.join(SIZES)}")
        if set(self.hybrid_families) - set(FAMILIES):
            raise TaskError(f"unknown families in hybrid_families: {sorted(set(self.hybrid_families) - set(FAMILIES))}")


@dataclass(frozen=True)
class Draw:
    task_id: str
    stage: str
    seed: int
    floor: bool  # drawn by the unassisted full-size floor, not by the ladder


class Curriculum:
    def __init__(self, config: CurriculumConfig = CurriculumConfig(), seed: int | None = None):
        """`seed`: the draws' (None: `config.seed`)."""
        self.config = config
        self.rng = random.Random(f"kgym/curriculum/{config.seed if seed is None else seed}")
        excluded = set(config.exclude)
        unknown = excluded - set(operations())
        if unknown:
            raise TaskError(f"exclude names unknown task ids {sorted(unknown)}")
        self.ops = {tid: op for tid, op in operations().items() if tid not in excluded}
        weights = {f: config.family_weights.get(f, 1.0) for f in FAMILIES}
        self.families = [f for f in FAMILIES if weights[f] > 0 and any(op.family == f for op in self.ops.values())]
        if not self.families:
            raise TaskError("the curriculum has no family left to draw from (weights all 0 or all excluded)")
        self.family_w = [weights[f] for f in self.families]
        self.rung = {tid: 0 for tid in self.ops}
        self.history: dict[tuple[str, str], deque[bool]] = {}
        self.floor_full = config.floor_full

    def set_floor_full(self, share: float) -> None:
        """The share of draws that are the unassisted full-size task, from the next draw on."""
        if not 0.0 <= share <= 1.0:
            raise TaskError(f"floor_full must be in [0, 1], not {share}")
        self.floor_full = share

    # -- sampling ---------------------------------------------------------------------------------
    def draw(self) -> Draw:
        family = self.rng.choices(self.families, self.family_w)[0]
        tid = self.rng.choice([t for t, op in self.ops.items() if op.family == family])
        seed = self.rng.getrandbits(63)
        if self.rng.random() < self.floor_full:
            return Draw(tid, "full", seed, floor=True)
        rungs = ladder(self.ops[tid].stages)[: self.rung[tid] + 1]
        w = [self.config.stage_weights.get(s, 1.0) * (self.config.current_boost if i == len(rungs) - 1 else 1.0)
             for i, s in enumerate(rungs)]
        if sum(w) == 0:
            return Draw(tid, "full", seed, floor=False)
        return Draw(tid, self.rng.choices(rungs, w)[0], seed, floor=False)

    def sample(self) -> tuple[Draw, Task]:
        d = self.draw()
        return d, self.make(d.task_id, d.seed, d.stage)

    def make(self, task_id: str, seed: int, stage: str) -> Task:
        """The task of a draw, with the hybrid allowance of its family."""
        task = make(task_id, seed, size=self.config.size, stage=stage)
        if task.spec.family in self.config.hybrid_families and not task.hybrid:
            task = dataclasses.replace(task, spec=dataclasses.replace(task.spec, answer_mode="hybrid"))
        return task

    # -- the ladder -------------------------------------------------------------------------------
    def record(self, task_id: str, stage: str, solved: bool) -> bool:
        """Report one attempt; returns True when it promoted the operation."""
        if task_id not in self.ops:
            raise TaskError(f"{task_id} is not in this curriculum")
        h = self.history.setdefault((task_id, stage), deque(maxlen=self.config.window))
        h.append(bool(solved))
        rungs = ladder(self.ops[task_id].stages)
        if stage not in rungs:
            raise TaskError(f"{task_id} has no stage {stage!r}")
        # Promote past the highest rung the operation now solves often enough (floor draws of the
        # full task count too: solving it there promotes straight to full).
        last = len(rungs) - 1
        best = self.rung[task_id]
        for i in range(self.rung[task_id], len(rungs)):
            if self._qualifies(task_id, rungs[i]):
                best = max(best, min(i + 1, last))
        promoted = best > self.rung[task_id]
        self.rung[task_id] = best
        return promoted

    def _qualifies(self, task_id: str, stage: str) -> bool:
        h = self.history.get((task_id, stage))
        return bool(h) and len(h) >= self.config.min_attempts and sum(h) / len(h) >= self.config.promote_at

    def current_stage(self, task_id: str) -> str:
        return ladder(self.ops[task_id].stages)[self.rung[task_id]]

    def solve_rate(self, task_id: str, stage: str) -> float | None:
        h = self.history.get((task_id, stage))
        return sum(h) / len(h) if h else None

    # -- checkpointing ----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"rng": list(self.rng.getstate()[1]), "rng_version": self.rng.getstate()[0],
                "rng_gauss": self.rng.getstate()[2], "rung": dict(self.rung),
                "history": [[t, s, list(h)] for (t, s), h in self.history.items()]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.setstate((state["rng_version"], tuple(state["rng"]), state["rng_gauss"]))
        for tid, r in state["rung"].items():
            if tid in self.rung:
                self.rung[tid] = min(int(r), len(ladder(self.ops[tid].stages)) - 1)
        self.history = {(t, s): deque(h, maxlen=self.config.window) for t, s, h in state["history"]}
