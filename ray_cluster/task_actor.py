"""`TaskActor`: the curriculum of `kgym.tasks` as a Ray actor, generating tasks on demand.

Covers drawing tasks (by the curriculum's weights and ladder, or one family at a time for jobs that
want every family), reporting outcomes back to the ladder, and checkpointing its state (plain JSON
data). Tasks travel as `kgym.tasks.Task` values (frozen dataclasses of text). Does not verify or
record anything; the caller reports each verdict with `record`.
"""

from __future__ import annotations

import random
from typing import Any

import ray

from kgym.tasks.curriculum import Curriculum, CurriculumConfig
from kgym.tasks.task import Task


@ray.remote(num_cpus=0)
class TaskActor:
    def __init__(self, config: CurriculumConfig = CurriculumConfig(), seed: int | None = None,
                 state: dict[str, Any] | None = None):
        """`seed`: the draws' (None: `config.seed`)."""
        seed = config.seed if seed is None else seed
        self.curriculum = Curriculum(config, seed)
        self.rng = random.Random(f"kgym/task-actor/{seed}")
        if state is not None:
            self.curriculum.load_state_dict(state)

    def families(self) -> list[str]:
        """The families this curriculum can draw from (those with registered operations)."""
        return list(self.curriculum.families)

    def sample(self, n: int = 1) -> list[Task]:
        """`n` draws by the curriculum's weights, ladder and full-size floor."""
        return [self.curriculum.sample()[1] for _ in range(n)]

    def sample_family(self, family: str, n: int = 1) -> list[Task]:
        """`n` tasks of one family, each at its operation's current rung of the ladder."""
        ops = [tid for tid, op in self.curriculum.ops.items() if op.family == family]
        if not ops:
            raise ValueError(f"family {family!r} has no operation in this curriculum")
        out = []
        for _ in range(n):
            tid = self.rng.choice(ops)
            out.append(self.curriculum.make(tid, self.rng.getrandbits(31), self.curriculum.current_stage(tid)))
        return out

    def make_tasks(self, specs: list[tuple[str, int, str]]) -> list[Task]:
        """Tasks of given (task id, seed, stage), at this curriculum's size and hybrid allowance (a
        held-out set); the curriculum's draws and ladder are untouched."""
        return [self.curriculum.make(tid, seed, stage) for tid, seed, stage in specs]

    def set_floor_full(self, share: float) -> None:
        """The share of draws that are the unassisted full-size task (the RL job's stage schedule)."""
        self.curriculum.set_floor_full(share)

    def record(self, task_id: str, stage: str, solved: bool) -> bool:
        """One attempt's outcome for the ladder; True when it promoted the operation."""
        return self.curriculum.record(task_id, stage, solved)

    def state_dict(self) -> dict[str, Any]:
        return self.curriculum.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.curriculum.load_state_dict(state)
