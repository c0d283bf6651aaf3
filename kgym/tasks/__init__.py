"""Procedural tasks: the fourteen families, staged curricula and prompts.

    from kgym.tasks import make, task_ids, check_task
    task = make("softmax-v1", seed=7, size="tiny")      # reference, solution, wrong, prompts
    verdict = verifier.verify(task.reference, answer, **task.verify_options())

`registry.py` holds the ids and `make`, `families/` the operations and their files, `prompts.py` the
single-turn and repair prompts, `check.py` the conformance check, `curriculum.py` the sampling
weights and the ladder, `decontaminate.py` the overlap check against a KernelBench checkout.
The conformance check runs the verifier (torch): `check_task` and `CheckResult` are imported on first
use (PEP 562), so the rest of the package (ids, specs, the curriculum's config) imports without torch.
"""

from __future__ import annotations

import importlib
from typing import Any

from kgym.tasks.registry import FAMILIES, get_operation, make, make_from_spec, operations, task_ids
from kgym.tasks.spec import ANSWER_MODES, SIZES, STAGES, TaskError, TaskSpec
from kgym.tasks.task import Task

__all__ = ["ANSWER_MODES", "FAMILIES", "SIZES", "STAGES", "CheckResult", "Task", "TaskError", "TaskSpec",
           "check_task", "get_operation", "make", "make_from_spec", "operations", "task_ids"]


_LAZY = {"CheckResult": "kgym.tasks.check", "check_task": "kgym.tasks.check"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kgym.tasks' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
