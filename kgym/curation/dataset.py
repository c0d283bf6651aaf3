"""Stage 11 of the funnel (the data): the curated set as one HF-datasets-ready Parquet file.

`datasets.load_dataset("parquet", data_files=PATH)` reads it, and TRL's SFTTrainer takes its
`messages` column (a list of {role, content}: system, user, assistant) as a conversational dataset.
The other columns say where a row came from and what the verifier measured, for filtering and
analysis. Written to a temporary file and renamed. Does not decide which rows belong (`pipeline.py`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
SCHEMA = pa.schema([
    pa.field("messages", pa.list_(MESSAGE), nullable=False),
    pa.field("source", pa.string(), nullable=False),  # kernelbook | gym
    pa.field("family", pa.string(), nullable=False),
    pa.field("task_id", pa.string(), nullable=False),
    pa.field("evaluation_id", pa.string(), nullable=False),  # the verdict in the records
    pa.field("answer_mode", pa.string(), nullable=False),  # triton | hybrid, by the verdict
    pa.field("ast_hybrid", pa.bool_()),  # KernelBook rows: the AST saw forward() keep a PyTorch op
    pa.field("entry_point", pa.string()),  # KernelBook rows: the module's class
    pa.field("uuid", pa.string()),  # KernelBook rows: the source row
    pa.field("module_key", pa.string()),
    pa.field("speedup_eager", pa.float64()),
    pa.field("speedup_compile", pa.float64()),
    pa.field("faster_than_eager", pa.bool_()),
    pa.field("faster_than_compile", pa.bool_()),
    pa.field("n_tokens", pa.int32()),  # under the target tokenizer; null when no tokenizer was given
])


@dataclass(frozen=True)
class DatasetRow:
    messages: list[dict[str, str]]
    source: str
    family: str
    task_id: str
    evaluation_id: str
    answer_mode: str
    ast_hybrid: bool | None = None
    entry_point: str | None = None
    uuid: str | None = None
    module_key: str | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    faster_than_eager: bool | None = None
    faster_than_compile: bool | None = None
    n_tokens: int | None = None


def write_dataset(rows: list[DatasetRow], path: str | Path) -> Path:
    from kgym.records.writer import write_table_atomically

    table = pa.Table.from_pylist([asdict(r) for r in rows], schema=SCHEMA)
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    return write_table_atomically(table, final)


def read_dataset(path: str | Path) -> pa.Table:
    return pq.read_table(path)
