"""The Parquet schema of kgym's records: one row per evaluation, versioned here and nowhere else.

Covers the column list (names, Arrow types, nullability), `SCHEMA_VERSION`, and `conform(rows)`
which turns plain row dicts into an Arrow table of exactly this schema. Does not build rows
(`record.py`), write files (`writer.py`) or read them back (`reader.py`).

Changing the meaning or type of a column bumps `SCHEMA_VERSION`; adding a nullable column at the
end does too, and readers fill it with nulls for older parts (`reader.load` unifies schemas).
Nested verdict fields that vary per task (shapes, stage times) are JSON strings, so every Parquet
tool can read them; hidden cases are a list of structs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

SCHEMA_VERSION = 2  # 2 (2026-12-07): eager_stable, compile_stable

_TS = pa.timestamp("us", tz="UTC")

CASE_TYPE = pa.struct([
    ("name", pa.string()),
    ("passed", pa.bool_()),
    ("max_abs_err", pa.float64()),
    ("max_rel_err", pa.float64()),
    ("passed_loose", pa.bool_()),
    ("order", pa.string()),
    ("note", pa.string()),
])

# (name, type, nullable, what it holds). The order is the column order of every part file.
COLUMNS: tuple[tuple[str, pa.DataType, bool, str], ...] = (
    # identity
    ("schema_version", pa.int16(), False, "SCHEMA_VERSION of the writer"),
    ("evaluation_id", pa.string(), False, "hash of task spec, candidate source, seed, verifier version"),
    ("run_id", pa.string(), False, "the run (one directory under the records root)"),
    ("job_id", pa.string(), False, "the job that produced the row (a run may hold several)"),
    ("recorded_at", _TS, False, "when the writer took the row"),
    ("started_at", _TS, True, "verification start"),
    ("finished_at", _TS, True, "verification end"),
    # task
    ("task_id", pa.string(), False, "versioned task id, e.g. softmax-v1"),
    ("family", pa.string(), False, "task family, e.g. softmax (custom for a bare kgym verify)"),
    ("operation", pa.string(), True, "the operation, e.g. log_softmax"),
    ("stage", pa.string(), True, "curriculum stage: full, small, scaffold, epilogue"),
    ("task_seed", pa.int64(), True, "the task's seed"),
    ("size", pa.string(), True, "tiny, small or full"),
    ("dtype", pa.string(), True, "e.g. float32"),
    ("shapes_json", pa.string(), True, "the task's shapes as JSON: name -> list of ints or int"),
    ("answer_mode", pa.string(), True, "triton or hybrid"),
    ("task_json", pa.string(), False, "the whole task spec as canonical JSON (TaskSpec.from_dict reads it)"),
    ("verify_seed", pa.int64(), False, "the public seed the verifier built the models with"),
    # candidate
    ("candidate_hash", pa.string(), False, "sha256 of the candidate source"),
    ("candidate_source", pa.string(), False, "the candidate as submitted"),
    # verdict
    ("passed", pa.bool_(), False, "every gate passed"),
    ("outcome", pa.string(), False, "passed, failed (a gate or timeout/crash) or error (kgym failed)"),
    ("gate", pa.string(), True, "first failing gate, timeout or crash; null when passed"),
    ("reason", pa.string(), True, "why it failed"),
    ("error", pa.string(), True, "set only when kgym itself failed (not the kernel's fault)"),
    ("cases", pa.list_(CASE_TYPE), False, "hidden cases in the order they ran"),
    ("cases_passed", pa.int32(), False, "hidden cases passed"),
    ("cases_total", pa.int32(), False, "hidden cases run"),
    ("candidate_ms", pa.float64(), True, "candidate median, ms"),
    ("candidate_spread_ms", pa.float64(), True, "candidate p90 - p10, ms"),
    ("candidate_runs", pa.int32(), True, "timed runs of the candidate"),
    ("candidate_stable", pa.bool_(), True, "candidate variation under the threshold"),
    ("eager_ms", pa.float64(), True, "eager PyTorch median, ms"),
    ("eager_spread_ms", pa.float64(), True, "eager p90 - p10, ms"),
    ("compile_ms", pa.float64(), True, "torch.compile(max-autotune) median, ms"),
    ("compile_spread_ms", pa.float64(), True, "torch.compile p90 - p10, ms"),
    ("timing_clock", pa.string(), True, "cuda_events or host"),
    ("speedup_eager", pa.float64(), True, "eager / candidate"),
    ("speedup_compile", pa.float64(), True, "torch.compile / candidate"),
    ("flagged", pa.bool_(), False, "a speedup above 10x (no speed credit until reviewed)"),
    ("launches", pa.int32(), False, "Triton launches in the first forward"),
    ("device_launches", pa.int32(), True, "Triton kernels seen on the device (GPU)"),
    ("library_calls", pa.int32(), False, "cuBLAS/cuDNN calls (hybrid tasks)"),
    ("hybrid", pa.bool_(), False, "one library call allowed"),
    ("baseline", pa.string(), False, "baseline of the reward's speed term: eager, compile, joint"),
    ("device", pa.string(), False, "device the candidate ran on"),
    ("verify_seconds", pa.float64(), True, "wall time of the verification"),
    ("stages_json", pa.string(), True, "wall seconds per verifier stage, as JSON"),
    ("notes", pa.list_(pa.string()), False, "verifier notes"),
    ("verifier_version", pa.string(), False, "VERIFIER_VERSION that judged it"),
    # reward
    ("reward", pa.float64(), False, "the reward the learner got for this evaluation"),
    # worker
    ("worker_id", pa.string(), True, "worker (actor) name"),
    ("worker_host", pa.string(), True, "hostname"),
    ("gpu_name", pa.string(), True, "GPU model, null on CPU"),
    ("torch_version", pa.string(), True, "torch.__version__ of the worker"),
    ("triton_version", pa.string(), True, "triton.__version__ of the worker"),
    # episode (null outside RL episodes)
    ("group_id", pa.string(), True, "group of answers to one prompt"),
    ("sample_index", pa.int32(), True, "index of the answer in its group"),
    ("turn", pa.int32(), True, "turn of a multi-turn repair episode (0 = first answer)"),
    # baselines' stability (schema 2; null in older parts, where only a note said so)
    ("eager_stable", pa.bool_(), True, "the eager baseline is usable: variation under the threshold, spread <= median"),
    ("compile_stable", pa.bool_(), True, "the torch.compile baseline is usable (as eager_stable)"),
)

SCHEMA = pa.schema([pa.field(name, typ, nullable=nullable) for name, typ, nullable, _ in COLUMNS],
                   metadata={b"kgym.schema_version": str(SCHEMA_VERSION).encode()})
COLUMN_NAMES = tuple(name for name, *_ in COLUMNS)


def conform(rows: Iterable[dict[str, Any]]) -> pa.Table:
    """Rows (dicts keyed by column name) as a table of exactly SCHEMA; a missing or unknown column,
    or a null in a non-nullable one, is a ValueError (bad rows never reach a file)."""
    rows = list(rows)
    for i, row in enumerate(rows):
        keys = set(row)
        if keys != set(COLUMN_NAMES):
            missing, extra = set(COLUMN_NAMES) - keys, keys - set(COLUMN_NAMES)
            raise ValueError(f"row {i}: missing columns {sorted(missing)}, unknown columns {sorted(extra)}")
        for name, _, nullable, _ in COLUMNS:
            if not nullable and row[name] is None:
                raise ValueError(f"row {i}: column {name!r} may not be null")
    arrays = [pa.array([row[name] for row in rows], type=typ) for name, typ, _, _ in COLUMNS]
    return pa.Table.from_arrays(arrays, schema=SCHEMA)


def describe() -> str:
    """The schema as a Markdown table (README's section is generated from this)."""
    lines = ["| column | type | null | what |", "|---|---|---|---|"]
    for name, typ, nullable, what in COLUMNS:
        lines.append(f"| `{name}` | {typ} | {'yes' if nullable else 'no'} | {what} |")
    return "\n".join(lines)
