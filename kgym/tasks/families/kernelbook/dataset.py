"""Reading KernelBook-layout files: Parquet or JSONL rows of real PyTorch modules.

KernelBook's layout: one row per module with at least `entry_point` (the module's class name) and
`python_code` (the module plus `get_inputs()` and `get_init_inputs()`, the latter returning
`[args, kwargs]`), and usually `triton_code` (a Triton answer defining `<entry_point>New`), `uuid`,
`repo_name`, `module_name`, `licenses`. kgym also reads an optional `wrong_triton_code` column (a
known-wrong answer, used by the bundled sample). Does not run any of the code (`normalise.py` does).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from kgym.tasks.spec import TaskError

SAMPLE = Path(__file__).parent / "sample.jsonl"
REQUIRED = ("entry_point", "python_code")


@dataclass(frozen=True)
class KernelBookRow:
    index: int  # position in the file: what a task's seed picks
    entry_point: str
    python_code: str
    triton_code: str | None
    wrong_triton_code: str | None
    uuid: str
    repo_name: str


def _rows_from_jsonl(path: Path) -> list[dict]:
    rows = []
    with path.open() as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise TaskError(f"{path}: line {n} is not valid JSON ({e.msg}); one JSON object per line") from None
            if not isinstance(row, dict):
                raise TaskError(f"{path}: line {n} is not a JSON object")
            rows.append(row)
    return rows


def _rows_from_parquet(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as e:  # noqa: BLE001 - pyarrow raises several types for unreadable files
        raise TaskError(f"{path}: not a readable Parquet file ({type(e).__name__}: {e})") from None
    return table.to_pylist()


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, size: int) -> tuple[KernelBookRow, ...]:
    p = Path(path)
    if p.suffix in (".jsonl", ".json"):
        raw = _rows_from_jsonl(p)
    elif p.suffix == ".parquet":
        raw = _rows_from_parquet(p)
    else:
        raise TaskError(f"{path}: KernelBook data must be a .parquet or .jsonl file")
    if not raw:
        raise TaskError(f"{path}: no rows")
    missing = [c for c in REQUIRED if c not in raw[0]]
    if missing:
        raise TaskError(f"{path}: KernelBook layout needs column(s) {missing}; found {sorted(raw[0])}")
    rows = []
    for i, r in enumerate(raw):
        if not isinstance(r.get("entry_point"), str) or not isinstance(r.get("python_code"), str):
            raise TaskError(f"{path}: row {i} has no string entry_point/python_code")
        rows.append(KernelBookRow(index=i, entry_point=r["entry_point"], python_code=r["python_code"],
                                  triton_code=r.get("triton_code"), wrong_triton_code=r.get("wrong_triton_code"),
                                  uuid=str(r.get("uuid", i)), repo_name=str(r.get("repo_name", ""))))
    return tuple(rows)


def load_rows(path: str | None) -> tuple[KernelBookRow, ...]:
    """The rows of a KernelBook file (default: the bundled sample), cached until the file changes."""
    p = Path(path) if path else SAMPLE
    if not p.is_file():
        raise TaskError(f"KernelBook file {str(p)!r} does not exist (give a .parquet or .jsonl path)")
    st = os.stat(p)
    return _load(str(p.resolve()), st.st_mtime_ns, st.st_size)
