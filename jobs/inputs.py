"""The rows a verification job reads, and the `EvalRequest` each one becomes.

A row names its task in one of two ways, and its candidate in one of two ways:

    {"task_id": "softmax-v1", "seed": 7, "stage": "full", "size": "tiny", "candidate": "<source>"}
    {"reference_path": "refs/my_op.py", "hybrid": false, "seed": 0, "candidate_path": "answers/a.py"}

- `task_id` + `seed` (+ optional `stage`, default full, and `size`, default the job's): a registered
  task, made with `kgym.tasks.make`; its reference, hybrid allowance and seed are the task's.
- `reference_path` (or `reference`, the source itself): a KernelBench-form module, recorded as family
  `custom` (`kgym.records.custom_task`); `seed` is the verifier's public seed (default 0).
- `candidate` (source text) or `candidate_path`; optional `label` (free text, echoed in the log).

Relative paths are taken from the input file's folder. Files: `.jsonl` (one JSON object a line) or
`.parquet`. Does not verify or record anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kgym.contract import EvalRequest

KNOWN_KEYS = {"task_id", "seed", "stage", "size", "reference_path", "reference", "hybrid", "candidate",
              "candidate_path", "label"}


class InputError(ValueError):
    """A row or input file that cannot become a request (the job's usage error)."""


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"input file {str(p)!r} does not exist")
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        return [{k: v for k, v in row.items() if v is not None} for row in pq.read_table(p).to_pylist()]
    if p.suffix in (".jsonl", ".json"):
        rows = []
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise InputError(f"{p}:{n}: not JSON: {e}") from None
        return rows
    raise InputError(f"input file {str(p)!r}: use .jsonl or .parquet")


def _text(row: Mapping[str, Any], key: str, base: Path, where: str) -> str | None:
    if row.get(key) is not None:
        return str(row[key])
    path_key = f"{key}_path"
    if row.get(path_key) is None:
        return None
    p = Path(row[path_key])
    p = p if p.is_absolute() else base / p
    try:
        return p.read_text()
    except OSError as e:
        raise InputError(f"{where}: {path_key} {str(p)!r}: {e}") from None


def request_from_row(row: Mapping[str, Any], *, base_dir: str | Path = ".", default_size: str = "full",
                     where: str = "row") -> EvalRequest:
    from kgym.records.record import custom_task
    from kgym.tasks import TaskError, make

    unknown = set(row) - KNOWN_KEYS
    if unknown:
        raise InputError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(KNOWN_KEYS)})")
    base = Path(base_dir)
    candidate = _text(row, "candidate", base, where)
    if not candidate:
        raise InputError(f"{where}: needs candidate or candidate_path")
    label = str(row.get("label") or "")
    if row.get("task_id") is not None:
        if row.get("seed") is None:
            raise InputError(f"{where}: a task_id row needs a seed")
        try:
            task = make(str(row["task_id"]), int(row["seed"]), size=str(row.get("size") or default_size),
                        stage=str(row.get("stage") or "full"))
        except TaskError as e:
            raise InputError(f"{where}: {e}") from None
        return EvalRequest.for_task(task, candidate, label=label)
    reference = _text(row, "reference", base, where)
    if not reference:
        raise InputError(f"{where}: needs task_id + seed, or reference_path (or reference)")
    seed = int(row.get("seed") or 0)
    hybrid = bool(row.get("hybrid", False))
    name = str(row.get("reference_path") or "reference.py")
    task = custom_task(name, reference, seed, hybrid=hybrid)
    return EvalRequest(task=task, reference=reference, candidate=candidate, seed=seed,
                       overrides={"hybrid": hybrid}, label=label)


def load_requests(path: str | Path, *, default_size: str = "full") -> list[EvalRequest]:
    p = Path(path)
    return [request_from_row(row, base_dir=p.parent, default_size=default_size, where=f"{p}: row {i}")
            for i, row in enumerate(read_rows(p), 1)]
