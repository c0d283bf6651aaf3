"""The registry of versioned task ids and `make(task_id, seed, ...)`.

Each family is a package in `kgym/tasks/families/` exposing `OPERATIONS`, a list of `Operation`.
Task ids are `<operation>-v<version>` (`softmax-v1`); changing what a task means bumps its version,
so a recorded id always names the same task. `make` is deterministic: the same arguments give
byte-identical sources on any machine. Does not sample a curriculum (`curriculum.py`).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import random
from functools import lru_cache

from kgym.contract.names import FAMILIES
from kgym.tasks.operation import Operation
from kgym.tasks.shapes import budget_for, distribution
from kgym.tasks.spec import SIZES, STAGES, TaskError, TaskSpec, check_seed
from kgym.tasks.task import Task


@lru_cache(maxsize=1)
def operations() -> dict[str, Operation]:
    """Every registered operation by task id, in family order."""
    ops: dict[str, Operation] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"kgym.tasks.families.{family}")
        for op in module.OPERATIONS:
            if op.family != family:
                raise RuntimeError(f"{op.name} is declared in family {family} but says {op.family}")
            if op.task_id in ops:
                raise RuntimeError(f"task id {op.task_id} registered twice")
            ops[op.task_id] = op
    return ops


def task_ids(family: str | None = None) -> list[str]:
    if family is not None and family not in FAMILIES:
        raise TaskError(f"unknown family {family!r}; families: {', '.join(FAMILIES)}")
    return [tid for tid, op in operations().items() if family is None or op.family == family]


def get_operation(task_id: str) -> Operation:
    ops = operations()
    if task_id in ops:
        return ops[task_id]
    hint = ""
    versions = [t for t in ops if t.rsplit("-v", 1)[0] == task_id]
    if versions:
        hint = f"; task ids carry a version: did you mean {versions[-1]!r}?"
    else:
        close = difflib.get_close_matches(task_id, list(ops), n=3)
        if close:
            hint = f"; did you mean {', '.join(map(repr, close))}?"
    raise TaskError(f"unknown task id {task_id!r}{hint} (`kgym tasks list` shows them all)")


def make(task_id: str, seed: int, *, size: str = "full", stage: str = "full",
         shapes: dict[str, int] | None = None, source: str | None = None) -> Task:
    """One task instance. `shapes` overrides the seed's shapes (all of them, by name); `source` is the
    data file of families that read one (KernelBook: Parquet or JSONL; default: the bundled sample)."""
    op = get_operation(task_id)
    check_seed(seed)
    if size not in SIZES:
        raise TaskError(f"unknown size {size!r}; sizes: {', '.join(SIZES)}")
    if stage not in STAGES:
        raise TaskError(f"unknown stage {stage!r}; stages: {', '.join(STAGES)}")
    if stage not in op.stages:
        raise TaskError(f"{task_id} has no {stage!r} stage; its stages: {', '.join(op.stages)}")
    # A string seed is hashed with SHA-512 by `random`: stable across processes and machines.
    rng = random.Random(f"kgym/{task_id}/{stage}/{size}/{seed}")
    drawn = op.draw_shapes(rng, budget_for(size, stage), source)
    dist = distribution(rng)
    final = dict(drawn) if shapes is None else dict(shapes)
    op.validate(final, set(drawn))
    spec = TaskSpec(task_id=task_id, family=op.family, operation=op.name, stage=stage, seed=seed, size=size,
                    dtype="float32", shapes=final, distribution=dist,
                    answer_mode="hybrid" if op.hybrid or stage == "epilogue" else "triton",
                    source=source)
    return Task(spec=spec, description=op.describe(spec), reference=op.reference_source(spec),
                solution=op.solution_source(spec), wrong=op.wrong_source(spec),
                scaffold=op.scaffold_source(spec))


def make_from_spec(spec: TaskSpec) -> Task:
    """Rebuild a task from a recorded spec (its shapes are taken as recorded)."""
    task = make(spec.task_id, spec.seed, size=spec.size, stage=spec.stage, shapes=spec.shapes, source=spec.source)
    if spec.answer_mode == "hybrid" and not task.hybrid:  # a job's hybrid allowance (RL's hybrid families, curation)
        task = dataclasses.replace(task, spec=dataclasses.replace(task.spec, answer_mode="hybrid"))
    if task.spec != spec:
        raise TaskError(f"spec of {spec.task_id} does not rebuild identically (recorded by another kgym version?)")
    return task
