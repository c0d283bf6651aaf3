"""Exporting tasks to Parquet: one row per task, for generators, SFT curation and inspection.

Rows come from a curriculum's draws (its initial ladder, nothing recorded), so the same arguments
give the same rows; the file is written to a temporary name and renamed. Columns: the spec's fields
(`task_id`, `family`, `operation`, `stage`, `seed`, `size`, `dtype`, `answer_mode`, `shapes` and
`distribution` as JSON), `spec` (the whole spec as JSON, for `TaskSpec.from_dict`), `description`,
`reference`, `prompt` (single-turn), `repair_messages` (JSON), `scaffold`, `solution`.
Does not verify the tasks (`check_task` does).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kgym.tasks.curriculum import Curriculum, CurriculumConfig
from kgym.tasks.task import Task


def task_row(task: Task) -> dict:
    s = task.spec
    return {"task_id": s.task_id, "family": s.family, "operation": s.operation, "stage": s.stage, "seed": s.seed,
            "size": s.size, "dtype": s.dtype, "answer_mode": s.answer_mode, "shapes": json.dumps(s.shapes),
            "distribution": json.dumps(s.distribution), "spec": s.to_json(), "description": task.description,
            "reference": task.reference, "prompt": task.prompt(),
            "repair_messages": json.dumps(task.repair_messages()), "scaffold": task.scaffold,
            "solution": task.solution}


SCHEMA = pa.schema([("task_id", pa.string()), ("family", pa.string()), ("operation", pa.string()),
                    ("stage", pa.string()), ("seed", pa.int64()), ("size", pa.string()), ("dtype", pa.string()),
                    ("answer_mode", pa.string()), ("shapes", pa.string()), ("distribution", pa.string()),
                    ("spec", pa.string()), ("description", pa.string()), ("reference", pa.string()),
                    ("prompt", pa.string()), ("repair_messages", pa.string()), ("scaffold", pa.string()),
                    ("solution", pa.string())])


def export_tasks(n: int, out: str | Path, seed: int = 0, config: CurriculumConfig = CurriculumConfig(),
                 progress=None) -> int:
    """Write `n` drawn tasks to `out` (Parquet). Returns the number of rows written."""
    if n < 1:
        raise ValueError("export needs n >= 1")
    cur = Curriculum(config, seed=seed)
    rows = []
    for _ in range(n):
        _, task = cur.sample()
        rows.append(task_row(task))
        if progress is not None:
            progress()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), tmp)
    os.replace(tmp, out)
    return len(rows)
