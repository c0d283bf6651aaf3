"""Stages 2 and 6 of the funnel: a KernelBook row in KernelBench form, at the target scale.

Normalising is `kgym.tasks`' KernelBook family: the row's module gets a `Model` subclass with its
constructor arguments baked in and positional `get_init_inputs()`, its answer a `ModelNew`
subclass; the module is imported and run in this process (a row's module is trusted data, like a
reference; its answer never runs here). Scaling multiplies the leading dimension of the inputs
until they hold about `target_elements` (the study: ~1M; a module that does not run with a larger
batch keeps its own shapes). The result is a `kgym.tasks.Task` of `kernelbook-v1` whose spec names
the file, the row and the batch factor, so the farm and the dataset's prompt use the same text.
Does not verify (`verification.py`) or classify (`classify.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kgym.curation.rows import SourceRow
from kgym.tasks import Task, TaskError, make
from kgym.tasks.families.kernelbook.normalise import answer_source, batch_factor, probe

TASK_ID = "kernelbook-v1"


@dataclass(frozen=True)
class Normalised:
    source: SourceRow
    answer: str  # the answer in KernelBench form (what is verified and what the dataset teaches)


def normalise(row: SourceRow) -> Normalised | str:
    """The row in KernelBench form, or why it cannot be (a message naming the row's problem)."""
    try:
        probe(row.row)
        answer = answer_source(row.row, row.row.triton_code)
    except TaskError as e:
        return str(e)
    if answer is None:
        return "no answer"
    return Normalised(row, answer)


def scaled_task(item: Normalised, path: str, *, target_elements: int, size: str, seed: int,
                hybrid: bool) -> Task | str:
    """The row's task with its inputs scaled to about `target_elements`; `hybrid` allows one library
    call (the task's answer mode, so the prompt says so and the evaluation id differs)."""
    row = item.source.row
    try:
        batch = batch_factor(probe(row), target_elements)
        task = make(TASK_ID, seed, size=size, shapes={"row": row.index, "batch": batch}, source=path)
    except TaskError as e:
        return str(e)
    if hybrid:
        task = replace(task, spec=replace(task.spec, answer_mode="hybrid"))
    return task
