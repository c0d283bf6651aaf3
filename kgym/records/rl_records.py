"""The RL job's records: the Parquet schemas of its three tables, where they live, how a step is
committed, and reading them back without rows of unfinished steps.

Layout, inside kgym's records layout (`kgym.records.layout`: ROOT/<run_id>/...):

    ROOT/<run_id>/<family>/part-*.parquet        the farm's evaluation rows (one per verification;
                                                 `kgym.records.load`, `kgym replay`), unchanged
    ROOT/<run_id>/_rl/rollouts/part-*.parquet    one row per episode, training and evaluation
    ROOT/<run_id>/_rl/steps/part-*.parquet       one row per step attempt (kgym.contract.rl_step.StepRow,
                                                 whose fields make the table's schema)
    ROOT/<run_id>/_rl/evals/part-*.parquet       one row per held-out evaluation
    ROOT/<run_id>/_rl/attempts/attempt-NNNN.json one per launch of the driver (written before any row)
    ROOT/<run_id>/_rl/done/step-NNNNNN.json      the commit marker of a step: {step, attempt, ...}

`_rl` starts with an underscore, so kgym's evaluation reader (which skips hidden and underscore
segments) never mixes these rows into its one-row-per-evaluation tables; pandas reads each table
directory directly (`pd.read_parquet(run / "_rl" / "rollouts")`: raw rows, superseded attempts
included).

Commit rule: every row carries `step` and `attempt`. A step's rows count only when the step's done
marker names that attempt (`committed`): the marker is written last, after the step's rows are
durable, so a crash leaves a step either committed with all its rows or not at all. On resume the
driver removes the markers of steps after its checkpoint (`drop_markers_after`) and redoes those
steps under a new attempt number; rows of the abandoned attempt stay on disk and are ignored.
Evaluation rows count when their `step` is committed by the same attempt.

Changing a column's meaning or type bumps `RL_SCHEMA_VERSION` (stored in every part's metadata and
in a column). This module imports pyarrow and pandas only; no torch, no Ray.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from kgym.contract.rl_step import StepRow
from kgym.records.layout import Location, locate
from kgym.records.writer import write_part

RL_SCHEMA_VERSION = 1
RL_DIR = "_rl"
_TS = pa.timestamp("us", tz="UTC")


class Table(StrEnum):
    ROLLOUTS = "rollouts"
    STEPS = "steps"
    EVALS = "evals"


class RowKind(StrEnum):
    """What an episode row was for."""

    TRAIN = "train"  # an episode of a training step
    EVAL = "eval"  # an episode of a held-out evaluation


_COMMON: tuple[tuple[str, pa.DataType, bool, str], ...] = (
    ("rl_schema_version", pa.int16(), False, "RL_SCHEMA_VERSION of the writer"),
    ("run_id", pa.string(), False, "the run"),
    ("attempt", pa.int32(), False, "launch of the driver that wrote the row (1, 2, ... after each resume)"),
    ("step", pa.int32(), False, "the RL step (1-based) the row belongs to"),
    ("recorded_at", _TS, False, "when the row was written"),
)

ROLLOUT_COLUMNS: tuple[tuple[str, pa.DataType, bool, str], ...] = _COMMON + (
    ("kind", pa.string(), False, "train or eval (RowKind)"),
    ("group_id", pa.string(), False, "the group of answers to one prompt"),
    ("sample_index", pa.int32(), False, "the answer's index in its group"),
    ("episode_id", pa.string(), False, "group_id-sample_index"),
    ("resample_round", pa.int32(), False, "0 for a step's first draw, k for the k-th resampling round"),
    ("task_id", pa.string(), False, "versioned task id"),
    ("family", pa.string(), False, "task family"),
    ("operation", pa.string(), True, "the operation"),
    ("stage", pa.string(), False, "curriculum stage: full, small, scaffold, epilogue"),
    ("size", pa.string(), True, "tiny, small or full"),
    ("task_seed", pa.int64(), True, "the task's seed"),
    ("answer_mode", pa.string(), True, "triton or hybrid (one library call allowed)"),
    ("task_json", pa.string(), False, "the whole task spec as canonical JSON"),
    ("mode", pa.string(), False, "single or repair"),
    ("policy_version", pa.int32(), True, "oldest policy version among the episode's turns (null: no turn)"),
    ("policy_versions", pa.list_(pa.int32()), False, "policy version of each turn"),
    ("learner_version", pa.int32(), False, "the learner's version when the step trained (staleness = this - "
     "policy_version)"),
    ("staleness", pa.int32(), True, "learner_version - policy_version"),
    ("end_reason", pa.string(), True, "why the episode ended (kgym.contract.EndReason); null on error"),
    ("error", pa.string(), True, "generation or kgym failure: the episode is never scored or trained on"),
    ("turns", pa.int32(), False, "assistant turns"),
    ("submissions", pa.int32(), False, "answers sent to the verifier"),
    ("solved", pa.bool_(), False, "the final evaluation passed every gate"),
    ("reward", pa.float64(), False, "the reward trained on (base + group credit)"),
    ("base_reward", pa.float64(), False, "the final verdict's reward with churn"),
    ("loose_credit", pa.float64(), False, "loose (1e-2) partial credit added by the group"),
    ("baseline", pa.string(), False, "speed baseline of the reward: eager, compile, joint"),
    ("final_evaluation_id", pa.string(), True, "the evaluation the reward rests on (the farm's rows)"),
    ("evaluation_ids", pa.list_(pa.string()), False, "every evaluation of the episode, in order"),
    ("final_gate", pa.string(), True, "first failing gate of the final verdict; null when passed or none"),
    ("speedup_eager", pa.float64(), True, "final verdict: eager / candidate"),
    ("speedup_compile", pa.float64(), True, "final verdict: torch.compile / candidate"),
    ("library_calls", pa.int32(), True, "final verdict: cuBLAS/cuDNN calls (a hybrid answer when > 0)"),
    ("prompt", pa.string(), False, "the first turn's prompt as text (the user message; repair: system + user)"),
    ("completion", pa.string(), False, "the assistant turns' texts, joined by blank lines"),
    ("prompt_ids", pa.list_(pa.int32()), True, "learner sample: prompt token ids (null: no sample)"),
    ("completion_ids", pa.list_(pa.int32()), True, "learner sample: completion token ids, tool tokens included"),
    ("loss_mask", pa.list_(pa.int8()), True, "learner sample: 1 on sampled tokens, 0 on inserted ones"),
    ("logprobs", pa.list_(pa.float32()), True, "learner sample: sampler log-probs per completion token"),
    ("flatten_kind", pa.string(), True, "one_sample, per_turn or no_sample (kgym.episodes.FlattenKind)"),
    ("samples", pa.int32(), False, "learner samples the episode gave (per-turn fallback: several; ids above are "
     "the first)"),
    ("completion_tokens", pa.int32(), False, "tokens the model generated over all turns"),
    ("finish_reasons", pa.list_(pa.string()), False, "the engine's finish reason per turn"),
    ("transcript_json", pa.string(), False, "the whole conversation (OpenAI-form messages) as JSON"),
    ("group_all_equal", pa.bool_(), False, "every answer of the group scored the same"),
    ("group_resampled", pa.bool_(), False, "the group was replaced by a resampled one (not trained on)"),
    ("trained", pa.bool_(), False, "the episode's samples went into the step's batch"),
    ("dropped_stale", pa.bool_(), False, "dropped by the off-policy bound (too many versions old)"),
)

# Arrow types by the names the contract's row types use (kgym.contract has no pyarrow).
ARROW_TYPES: dict[str, pa.DataType] = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(),
                                       "float64": pa.float64(), "bool": pa.bool_()}


def _columns_of(row_type: type, skip: Iterable[str]) -> tuple[tuple[str, pa.DataType, bool, str], ...]:
    """A contract row type's columns in its field order: name, Arrow type, nullable, doc."""
    skip = set(skip)
    return tuple((f.name, ARROW_TYPES[f.metadata["arrow"]], bool(f.metadata["null"]), f.metadata["doc"])
                 for f in fields(row_type) if f.name not in skip)


# The step row is a contract type (kgym.contract.rl_step.StepRow): its fields are the columns, after
# the columns every table shares (its run_id, attempt and step are those).
STEP_COLUMNS: tuple[tuple[str, pa.DataType, bool, str], ...] = _COMMON + _columns_of(
    StepRow, (n for n, *_ in _COMMON))

EVAL_COLUMNS: tuple[tuple[str, pa.DataType, bool, str], ...] = _COMMON + (
    ("policy_version", pa.int32(), False, "policy evaluated"),
    ("tasks", pa.int32(), False, "held-out tasks"),
    ("samples", pa.int32(), False, "samples per task (multi-sample scoring)"),
    ("solve_rate", pa.float64(), False, "mean over tasks of the share of samples solved"),
    ("solve_rate_std", pa.float64(), False, "std across sample passes of the pass's solve rate"),
    ("reward_mean", pa.float64(), False, "mean reward over every sample"),
    ("per_task_json", pa.string(), False, "task key -> share of samples solved, as JSON"),
    ("previous_step", pa.int32(), True, "the evaluation compared against (null for the first)"),
    ("delta_pp", pa.float64(), True, "solve rate minus the previous evaluation's, percentage points"),
    ("ci95_low_pp", pa.float64(), True, "paired bootstrap 95% interval over tasks, low end"),
    ("ci95_high_pp", pa.float64(), True, "high end"),
    ("gained", pa.int32(), True, "tasks whose solved share rose"),
    ("lost", pa.int32(), True, "tasks whose solved share fell"),
)

COLUMNS: dict[Table, tuple[tuple[str, pa.DataType, bool, str], ...]] = {
    Table.ROLLOUTS: ROLLOUT_COLUMNS, Table.STEPS: STEP_COLUMNS, Table.EVALS: EVAL_COLUMNS}


def schema(table: Table) -> pa.Schema:
    return pa.schema([pa.field(n, t, nullable=null) for n, t, null, _ in COLUMNS[Table(table)]],
                     metadata={"kgym.rl_schema_version": str(RL_SCHEMA_VERSION), "kgym.rl_table": str(table)})


def conform(table: Table, rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows (plain dicts) as an Arrow table of exactly `table`'s schema; a missing required value or an
    unknown column is refused, naming it."""
    cols = COLUMNS[Table(table)]
    names = {n for n, *_ in cols}
    rows = [dict(r) for r in rows]
    import datetime as dt

    now = dt.datetime.now(dt.UTC)
    for r in rows:
        r.setdefault("recorded_at", now)
        extra = set(r) - names
        if extra:
            raise ValueError(f"{table} rows have unknown column(s) {sorted(extra)}")
        r.setdefault("rl_schema_version", RL_SCHEMA_VERSION)
        for n, _, null, _ in cols:
            if not null and r.get(n) is None:
                raise ValueError(f"{table} row without its required column {n!r}")
    return pa.Table.from_pylist(rows, schema=schema(table))


# -- where ----------------------------------------------------------------------------------------
def rl_location(run: str | Location) -> Location:
    """`run` (ROOT/<run_id>, a path or URI) -> its `_rl` directory."""
    return locate(run).join(RL_DIR)


def _write_json(loc: Location, obj: Any) -> None:
    """A small JSON file, visible whole or not at all (the same rule as `write_part`)."""
    data = json.dumps(obj, sort_keys=True, indent=1).encode()
    parent = loc.parent()
    parent.fs.create_dir(parent.path, recursive=True)
    if loc.object_store:
        with loc.fs.open_output_stream(loc.path) as out:
            out.write(data)
        return
    if loc.local:
        import os

        tmp = f"{parent.path}/.{loc.name}.{uuid.uuid4().hex[:8]}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, loc.path)
        return
    tmp_loc = parent.join(f".{loc.name}.{uuid.uuid4().hex[:8]}.tmp")
    with tmp_loc.fs.open_output_stream(tmp_loc.path) as out:
        out.write(data)
    loc.fs.move(tmp_loc.path, loc.path)


def _read_json(loc: Location) -> Any:
    with loc.fs.open_input_stream(loc.path) as f:
        return json.loads(f.read().decode())


def _list(loc: Location, prefix: str, suffix: str) -> list[Location]:
    info = loc.fs.get_file_info(loc.path)
    if info.type != pafs.FileType.Directory:
        return []
    found = [f for f in loc.fs.get_file_info(pafs.FileSelector(loc.path)) if f.type == pafs.FileType.File
             and f.base_name.startswith(prefix) and f.base_name.endswith(suffix)]
    return sorted((loc.join(f.base_name) for f in found), key=lambda x: x.name)


# -- writing --------------------------------------------------------------------------------------
class RLRecords:
    """The driver's handle on one run's RL tables (one per driver process).

    `begin_attempt()` first (durable before any row), then per step: `write(table, rows)` for its
    rows (each call one part file, visible whole), `commit(step, info)` last."""

    def __init__(self, run: str | Location):
        self.location = rl_location(run)
        self.location.fs.create_dir(self.location.path, recursive=True)
        self.attempt: int | None = None
        self._writer = uuid.uuid4().hex[:8]
        self._seq = 0

    def attempts(self) -> list[dict[str, Any]]:
        return [_read_json(p) for p in _list(self.location.join("attempts"), "attempt-", ".json")]

    def begin_attempt(self, info: Mapping[str, Any]) -> int:
        """The next attempt number, recorded before this launch writes any row."""
        done = self.attempts()
        self.attempt = 1 + max((int(a["attempt"]) for a in done), default=0)
        _write_json(self.location.join("attempts", f"attempt-{self.attempt:04d}.json"),
                    {**info, "attempt": self.attempt})
        return self.attempt

    def end_attempt(self, outcome: str, reason: str | None = None) -> None:
        """This launch's last record: its attempt file again, with how it ended (`done`, or `failed`
        and why), so a run that gave up says so where a reader of the records looks first."""
        if self.attempt is None:
            raise RuntimeError("begin_attempt() before end_attempt()")
        loc = self.location.join("attempts", f"attempt-{self.attempt:04d}.json")
        info = _read_json(loc)
        _write_json(loc, {**info, "outcome": outcome, "reason": reason, "ended_at": time.time()})

    def write(self, table: Table, rows: list[dict[str, Any]]) -> str | None:
        """One part file of `rows` (their `run_id`, `attempt`, `step` set by the caller)."""
        if not rows:
            return None
        if self.attempt is None:
            raise RuntimeError("begin_attempt() before writing rows")
        import datetime as dt

        now = dt.datetime.now(dt.UTC)
        for r in rows:
            r.setdefault("recorded_at", now)
            if r.get("attempt") != self.attempt:
                raise ValueError(f"a row of attempt {r.get('attempt')} written by attempt {self.attempt}")
        name = f"part-a{self.attempt:04d}-{self._writer}-{self._seq:06d}.parquet"
        self._seq += 1
        part = write_part(conform(table, rows), self.location.join(str(Table(table)), name))
        return part.uri

    def commit(self, step: int, info: Mapping[str, Any]) -> None:
        """The step's done marker: written after its rows; the step counts from now on."""
        _write_json(self.location.join("done", f"step-{step:06d}.json"),
                    {**info, "step": step, "attempt": self.attempt})

    def markers(self) -> dict[int, dict[str, Any]]:
        return {int(m["step"]): m for m in (_read_json(p) for p in _list(self.location.join("done"), "step-",
                                                                              ".json"))}

    def drop_markers_after(self, step: int) -> list[int]:
        """Un-commit the steps after `step` (a resume from the checkpoint of `step` redoes them)."""
        dropped = []
        for p in _list(self.location.join("done"), "step-", ".json"):
            s = int(p.name[len("step-"):-len(".json")])
            if s > step:
                p.fs.delete_file(p.path)
                dropped.append(s)
        return dropped


# -- reading --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Committed:
    """Which (step, attempt) pairs count."""

    steps: dict[int, int]  # step -> attempt whose rows count

    def mask(self, df: Any) -> Any:
        if not len(df):
            return df
        want = df["step"].map(self.steps)
        return df[want.notna() & (df["attempt"] == want)]


def markers(run: str | Location) -> dict[int, dict[str, Any]]:
    """The done markers of `run`, by step."""
    loc = rl_location(run).join("done")
    return {int(m["step"]): m for m in (_read_json(p) for p in _list(loc, "step-", ".json"))}


def committed(run: str | Location) -> Committed:
    return Committed({s: int(m["attempt"]) for s, m in markers(run).items()})


def read_raw(run: str | Location, table: Table) -> Any:
    """Every row of `table` under `run` as pandas, superseded attempts included."""
    import pandas as pd

    loc = rl_location(run).join(str(Table(table)))
    parts = _list(loc, "part-", ".parquet")
    if not parts:
        return pd.DataFrame({n: pd.Series(dtype="object") for n, *_ in COLUMNS[Table(table)]})
    tables = [pq.read_table(p.path, filesystem=p.fs) for p in parts]
    return pa.concat_tables(tables, promote_options="default").to_pandas()


def load(run: str | Location, table: Table) -> Any:
    """The rows of committed steps only (see the module docstring), sorted by step."""
    df = committed(run).mask(read_raw(run, table))
    if len(df):
        order = [c for c in ("step", "group_id", "sample_index") if c in df.columns]
        df = df.sort_values(order, kind="stable").reset_index(drop=True)
    return df


def describe_table(table: Table) -> str:
    """The table's columns as a Markdown table (docs/rl.md is generated from this)."""
    lines = ["| column | type | null | what |", "|---|---|---|---|"]
    for n, t, null, what in COLUMNS[Table(table)]:
        lines.append(f"| `{n}` | {t} | {'yes' if null else 'no'} | {what} |")
    return "\n".join(lines)


__all__ = ["COLUMNS", "RL_DIR", "RL_SCHEMA_VERSION", "Committed", "RLRecords", "RowKind", "Table", "committed",
           "conform", "describe_table", "load", "markers", "read_raw", "rl_location", "schema"]
