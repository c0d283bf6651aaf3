"""The baselines table: speed baselines measured in full, stored beside a run's evaluations and joined
onto them when the records are read.

    ROOT/<run_id>/_baselines/part-<job>-<writer>-<seq>.parquet     one row per full measurement

A verdict whose reward's baseline is eager does not wait for the torch.compile baseline
(`VerifyConfig.defer_compile`); the farm measures it after the verdict (or ahead, when prefetching)
and the figure arrives here. `join_baselines` (which `reader.load` applies) fills an evaluation's
missing eager or compile figure, and its speedup, from the fastest row measured for the same task
spec, public seed, timed-run count, GPU model (the device on the CPU) and torch and triton versions,
so the study's compile-vs-eager analysis reads the same columns whether the figure came with the
verdict or later. `eager_from` and `compile_from` say which (`verdict`, `baselines`, or null).

The directory starts with an underscore, so the evaluation readers (kgym's `find_parts`, pyarrow and
pandas) never take these parts for evaluation rows. Parts are written as evaluation parts are
(`writer.write_part`: visible whole or not at all). Does not measure anything (`kgym.verify`) or
decide when a baseline is measured (the farm's worker).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from kgym.contract import Timing, WorkerInfo, canonical_json
from kgym.contract.verdict import usable_baseline
from kgym.records.layout import PART_SUFFIX, Location, check_id, locate

BASELINES_DIR = "_baselines"
BASELINES_SCHEMA_VERSION = 1
SOURCES = ("candidate", "prefetch", "deferred")  # kgym.verify.parent.baselines.Source, as stored
KINDS = ("eager", "compile")

_TS = pa.timestamp("us", tz="UTC")

# (name, type, nullable, what it holds)
BASELINE_COLUMNS: tuple[tuple[str, pa.DataType, bool, str], ...] = (
    ("schema_version", pa.int16(), False, "BASELINES_SCHEMA_VERSION of the writer"),
    ("run_id", pa.string(), False, "the run whose farm measured it"),
    ("job_id", pa.string(), False, "the job that wrote the row"),
    ("recorded_at", _TS, False, "when the writer took the row"),
    ("measured_at", _TS, False, "when the measurement ended"),
    ("task_id", pa.string(), False, "versioned task id"),
    ("family", pa.string(), False, "task family"),
    ("task_json", pa.string(), False, "the task spec as canonical JSON (joins onto evaluations)"),
    ("verify_seed", pa.int64(), False, "the public seed: with the task it fixes the shapes"),
    ("kind", pa.string(), False, "eager or compile"),
    ("median_ms", pa.float64(), False, "median, ms"),
    ("spread_ms", pa.float64(), False, "p90 - p10, ms"),
    ("runs", pa.int32(), False, "timed runs (the candidate's count: part of the join key)"),
    ("stable", pa.bool_(), False, "usable: under the variation gate, spread at most the median"),
    ("clock", pa.string(), False, "cuda_events or host"),
    ("source", pa.string(), False, "candidate (on a verification's path), prefetch or deferred"),
    ("measure_seconds", pa.float64(), True, "wall time of the measurement (compile included)"),
    ("device", pa.string(), False, "device it was timed on"),
    ("gpu_name", pa.string(), True, "GPU model, null on CPU"),
    ("worker_id", pa.string(), True, "worker (actor) name"),
    ("worker_host", pa.string(), True, "hostname"),
    ("torch_version", pa.string(), True, "torch.__version__ of the worker"),
    ("triton_version", pa.string(), True, "triton.__version__ of the worker"),
)
BASELINE_SCHEMA = pa.schema([pa.field(n, t, nullable=null) for n, t, null, _ in BASELINE_COLUMNS],
                            metadata={b"kgym.baselines_schema_version": str(BASELINES_SCHEMA_VERSION).encode()})
BASELINE_COLUMN_NAMES = tuple(n for n, *_ in BASELINE_COLUMNS)
# What makes two measurements measure the same thing (besides the kind).
JOIN_KEY = ("task_json", "verify_seed", "runs", "timed_where", "torch_version", "triton_version")


def baseline_row(*, task: Mapping[str, Any], seed: int, kind: str, timing: Timing, source: str, device: str,
                 worker: WorkerInfo | None = None, seconds: float | None = None,
                 measured_at: float | None = None) -> dict[str, Any]:
    """One row of the table (run_id, job_id and recorded_at are the writer's)."""
    if kind not in KINDS:
        raise ValueError(f"baseline kind {kind!r}: use one of {', '.join(KINDS)}")
    if source not in SOURCES:
        raise ValueError(f"baseline source {source!r}: use one of {', '.join(SOURCES)}")
    if "task_id" not in task or "family" not in task:
        raise ValueError("a baseline row's task needs at least task_id and family")
    worker = worker or WorkerInfo()
    return {
        "measured_at": dt.datetime.fromtimestamp(time.time() if measured_at is None else measured_at, dt.UTC),
        "task_id": str(task["task_id"]), "family": str(task["family"]), "task_json": canonical_json(dict(task)),
        "verify_seed": int(seed), "kind": kind, "median_ms": float(timing.median_ms),
        "spread_ms": float(timing.spread_ms), "runs": int(timing.runs), "stable": usable_baseline(timing),
        "clock": timing.clock, "source": source, "measure_seconds": seconds, "device": device,
        "gpu_name": worker.gpu_name, "worker_id": worker.worker_id, "worker_host": worker.host,
        "torch_version": worker.torch_version, "triton_version": worker.triton_version,
    }


def conform_baselines(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows as a table of exactly BASELINE_SCHEMA; a missing, unknown or wrongly null column is a ValueError."""
    rows = list(rows)
    for i, row in enumerate(rows):
        if set(row) != set(BASELINE_COLUMN_NAMES):
            missing, extra = set(BASELINE_COLUMN_NAMES) - set(row), set(row) - set(BASELINE_COLUMN_NAMES)
            raise ValueError(f"baseline row {i}: missing columns {sorted(missing)}, unknown {sorted(extra)}")
        for name, _, nullable, _ in BASELINE_COLUMNS:
            if not nullable and row[name] is None:
                raise ValueError(f"baseline row {i}: column {name!r} may not be null")
    return pa.Table.from_arrays([pa.array([r[n] for r in rows], type=t) for n, t, _, _ in BASELINE_COLUMNS],
                                schema=BASELINE_SCHEMA)


class BaselineWriter:
    """Buffers baseline rows of one run and flushes them as parts under RUN/_baselines/ (on
    `flush_rows` rows, on a write that finds the oldest row older than `flush_seconds`, on
    `flush_if_due()`, `flush()` and `close()`). Its calls are serialised by a lock."""

    def __init__(self, root: str | Path | Location, run_id: str, job_id: str, *, flush_rows: int = 64,
                 flush_seconds: float = 30.0, filesystem: Any = None):
        if flush_rows < 1 or flush_seconds < 0:
            raise ValueError("need flush_rows >= 1 and flush_seconds >= 0")
        self.run_id = check_id(run_id, "run id")
        self.job_id = check_id(job_id, "job id")
        self.location = locate(root, filesystem).join(self.run_id, BASELINES_DIR)
        self.flush_rows, self.flush_seconds = flush_rows, flush_seconds
        self.writer_id = uuid.uuid4().hex[:8]
        self._buffer: list[dict[str, Any]] = []
        self._oldest: float | None = None
        self._seq = 0
        self._lock = threading.Lock()
        self._closed = False
        self.rows_written = 0

    def write(self, row: Mapping[str, Any]) -> None:
        """Take one `baseline_row`; a row that does not fit the schema is refused here."""
        full = {**row, "schema_version": BASELINES_SCHEMA_VERSION, "run_id": self.run_id, "job_id": self.job_id,
                "recorded_at": dt.datetime.now(dt.UTC)}
        conform_baselines([full])
        with self._lock:
            if self._closed:
                raise ValueError("write to a closed BaselineWriter")
            self._buffer.append(full)
            self._oldest = self._oldest if self._oldest is not None else time.monotonic()
            if len(self._buffer) >= self.flush_rows or self._due():
                self._flush_locked()

    def _due(self) -> bool:
        return self._oldest is not None and time.monotonic() - self._oldest >= self.flush_seconds

    def flush_if_due(self) -> int:
        with self._lock:
            return self._flush_locked() if self._due() else 0

    def flush(self) -> int:
        with self._lock:
            return self._flush_locked()

    def _flush_locked(self) -> int:
        from kgym.records.writer import write_part

        if not self._buffer:
            return 0
        name = f"part-{self.job_id}-{self.writer_id}-{self._seq:06d}{PART_SUFFIX}"
        write_part(conform_baselines(self._buffer), self.location.join(name))
        n = len(self._buffer)
        self._seq += 1
        self.rows_written += n
        self._buffer, self._oldest = [], None
        return n

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._flush_locked()
                self._closed = True

    def __enter__(self) -> BaselineWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def baseline_parts(where: str | Path | Location, filesystem: Any = None) -> list[Location]:
    """The visible baseline parts under `where` (a run, or a root of runs); none for a part file."""
    loc = locate(where, filesystem)
    info = loc.fs.get_file_info(loc.path)
    if info.type != pafs.FileType.Directory:
        return []
    base = loc.path.rstrip("/")
    found = []
    for f in loc.fs.get_file_info(pafs.FileSelector(base, recursive=True)):
        rel = f.path[len(base):].lstrip("/") if f.path.startswith(base) else f.base_name
        segs = rel.split("/")
        if (f.type == pafs.FileType.File and rel.endswith(PART_SUFFIX) and len(segs) >= 2
                and segs[-2] == BASELINES_DIR and not segs[-1].startswith((".", "_"))):
            found.append(Location(loc.fs, f.path, loc.uri_root, loc.root_path))
    return sorted(found, key=lambda p: p.path)


def load_baselines(where: str | Path | Location, filesystem: Any = None) -> pd.DataFrame:
    """Every baseline row under `where` as a DataFrame (empty, with the columns, when there is none)."""
    tables = [pq.read_table(p.path, filesystem=p.fs) for p in baseline_parts(where, filesystem)]
    if not tables:
        return pd.DataFrame({n: pd.Series(dtype=object) for n in BASELINE_COLUMN_NAMES})
    return pa.concat_tables(tables, promote_options="default").to_pandas()


def _timed_where(df: pd.DataFrame) -> pd.Series:
    gpu = df["gpu_name"] if "gpu_name" in df.columns else pd.Series(None, index=df.index, dtype=object)
    return gpu.fillna(df["device"]).fillna("").astype(str)


def _key_frame(df: pd.DataFrame, runs: str) -> pd.DataFrame:
    out = pd.DataFrame(index=df.index)
    out["task_json"] = df["task_json"].astype(str)
    out["verify_seed"] = pd.to_numeric(df["verify_seed"]).astype("Int64").astype(str)
    out["runs"] = pd.to_numeric(df[runs]).astype("Int64").astype(str)
    out["timed_where"] = _timed_where(df)
    for col in ("torch_version", "triton_version"):
        out[col] = df[col].fillna("").astype(str) if col in df.columns else ""
    return out


def join_baselines(evaluations: pd.DataFrame, baselines: pd.DataFrame) -> pd.DataFrame:
    """`evaluations` (a `load`ed frame) with each missing eager or compile figure of a timed
    candidate filled from `baselines` (the fastest stable row of that kind for the same JOIN_KEY), its
    speedup recomputed from the candidate's median; `eager_from` / `compile_from` say where each
    figure came from: "verdict", "baselines", or null when there is none. Rewards are not touched:
    a row's reward is what the learner got."""
    df = evaluations.copy()
    for kind in KINDS:
        df[f"{kind}_from"] = pd.Series(None, index=df.index, dtype=object)
        df.loc[df[f"{kind}_ms"].notna(), f"{kind}_from"] = "verdict"
    if not len(df) or not len(baselines):
        return df
    # Only stable figures stand for a speedup (issue 29): an unstable one, its spread over the
    # variation gate, is the easiest to skew and was never cached by the verifier either.
    baselines = baselines[baselines["stable"].fillna(False).astype(bool)]
    if not len(baselines):
        return df
    keys = _key_frame(df, "candidate_runs")
    table = _key_frame(baselines, "runs")
    table["kind"], table["median_ms"], table["spread_ms"] = baselines["kind"], baselines["median_ms"], \
        baselines["spread_ms"]
    fastest = table.sort_values("median_ms", kind="stable").drop_duplicates([*JOIN_KEY, "kind"], keep="first")
    for kind in KINDS:
        want = df[f"{kind}_ms"].isna() & df["candidate_ms"].notna()
        if not want.any():
            continue
        rows = keys[want].rename_axis("_row").reset_index()
        found = rows.merge(fastest[fastest["kind"] == kind], on=list(JOIN_KEY), how="inner")
        if not len(found):
            continue
        idx = found["_row"].to_numpy()
        df.loc[idx, f"{kind}_ms"] = found["median_ms"].to_numpy()
        df.loc[idx, f"{kind}_spread_ms"] = found["spread_ms"].to_numpy()
        if f"{kind}_stable" in df:
            df.loc[idx, f"{kind}_stable"] = True  # only stable rows are joined
        df.loc[idx, f"speedup_{kind}"] = found["median_ms"].to_numpy() / df.loc[idx, "candidate_ms"].to_numpy()
        df.loc[idx, f"{kind}_from"] = "baselines"
    return df
