"""`StepRow`: one row of the RL job's steps table, what a step did and cost, as a typed value.

The RL driver builds one per step attempt and hands it to the records (`kgym.records.rl_records`,
whose Parquet schema for the table is made from these fields: the column names, their order, the
Arrow type named in each field's metadata, nullable exactly when the field may be None, the doc) and
to the metrics (`jobs/rl_metrics.py`). `to_row()` is the plain dict the writer takes, `from_row()`
reads one back (a replayed row: the writer's own `rl_schema_version` and `recorded_at` are left out).
A field added here is a column of the next rows; the schema version (`RL_SCHEMA_VERSION`) says when
old logs would read differently. No torch, no pyarrow: plain data. Does not write or read files.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def _col(arrow: str, doc: str, *, null: bool = False) -> Any:
    """A column: its Arrow type by name (`kgym.records.rl_records.ARROW_TYPES`), its doc, and whether
    it may be null (then its default is None)."""
    meta = {"arrow": arrow, "doc": doc, "null": null}
    return field(default=None, metadata=meta) if null else field(metadata=meta)


@dataclass(frozen=True, kw_only=True)
class StepRow:
    run_id: str = _col("string", "the run")
    attempt: int = _col("int32", "launch of the driver that wrote the row (1, 2, ... after each resume)")
    step: int = _col("int32", "the RL step (1-based) the row belongs to")
    status: str = _col("string", "the learner's StepStatus (ok, no_loss_tokens, non_finite) or 'no_batch'")
    version_before: int = _col("int32", "policy version the step's rollouts were asked under")
    version_after: int = _col("int32", "policy version after the learner step")
    learner_step: int = _col("int32", "optimizer steps done after this step")
    tasks: int = _col("int32", "tasks drawn for the step (before resampling)")
    groups: int = _col("int32", "groups rolled out, resampled ones included")
    groups_resampled: int = _col("int32", "groups whose answers all scored the same and were replaced")
    groups_all_equal_kept: int = _col("int32", "all-equal groups kept after the resample budget ran out")
    episodes: int = _col("int32", "episodes rolled out")
    episodes_error: int = _col("int32", "episodes that failed inside kgym (never trained on)")
    samples_trained: int = _col("int32", "learner samples in the batch")
    dropped_stale: int = _col("int32", "samples dropped by the off-policy bound")
    staleness_max: int | None = _col("int32", "largest staleness among the batch's samples", null=True)
    reward_mean: float | None = _col("float64", "mean reward over the trained groups' episodes", null=True)
    reward_std: float | None = _col("float64", "std of those rewards", null=True)
    solve_rate: float | None = _col("float64", "solved / episodes of the trained groups", null=True)
    solve_rate_single: float | None = _col("float64", "the same, single-turn episodes", null=True)
    solve_rate_repair: float | None = _col("float64", "the same, repair episodes", null=True)
    hybrid_rate: float | None = _col("float64", "share of solved answers that made a library call", null=True)
    floor_full: float = _col("float64", "the curriculum's unassisted full-size share for this step")
    loss: float | None = _col("float64", "learner loss", null=True)
    kl: float | None = _col("float64", "mean k3 KL to the reference per loss token", null=True)
    entropy: float | None = _col("float64", "mean token entropy (nats)", null=True)
    clip_fraction: float | None = _col("float64", "loss tokens whose CISPO weight the bound changed", null=True)
    grad_norm: float | None = _col("float64", "gradient norm before clipping", null=True)
    lr: float | None = _col("float64", "learning rate of the step", null=True)
    logprob_drift: float | None = _col("float64", "mean |sampler - learner| log-prob over loss tokens", null=True)
    sampler_kl: float | None = _col("float64", "mean k3 estimate of KL(sampler || learner) over those tokens",
                                    null=True)
    is_truncated_fraction: float | None = _col("float64", "share of those tokens whose learner/sampler ratio "
                                               "exceeds the correction cap", null=True)
    train_tokens: int = _col("int64", "tokens through the learner")
    generated_tokens: int = _col("int64", "tokens the engine generated in the step")
    generation_tokens_per_s: float | None = _col("float64", "generated tokens / engine-busy seconds", null=True)
    rollout_s: float = _col("float64", "wall seconds of the rollout phase (generation and verification overlap)")
    generation_s: float = _col("float64", "seconds the engine was generating within the rollout phase")
    verification_s: float = _col("float64", "rollout_s - generation_s: the engine idle, episodes waiting on the "
                                 "farm")
    verify_busy_s: float = _col("float64", "sum of the step's verifications' own wall seconds (farm work)")
    verifications: int = _col("int32", "evaluations submitted by the step's episodes")
    learning_s: float = _col("float64", "wall seconds of the learner step, as the driver saw it")
    sync_s: float = _col("float64", "wall seconds of the adapter sync (write + load into the engine)")
    generate_calls: int | None = _col("int32", "engine calls of the step's rollout: rounds of the round batcher, "
                                      "admissions (iterations that took in requests) of the continuous one", null=True)
    mean_batch: float | None = _col("float64", "requests per engine call or admission: with the round batcher, low "
                                    "means rounds fragmented (turns ready at different times wait for the call in "
                                    "flight)", null=True)
    sleep_s: float | None = _col("float64", "colocated mode: seconds the engine took to sleep before the learner "
                                 "step", null=True)
    wake_s: float | None = _col("float64", "colocated mode: seconds the learner's memory release and the engine's "
                                "wake-up took", null=True)
    checkpoint_s: float = _col("float64", "wall seconds of the checkpoint (0 when none was due)")
    eval_s: float = _col("float64", "wall seconds of the held-out evaluation (0 when none was due)")
    step_s: float = _col("float64", "wall seconds of the whole step")
    checkpoint: str | None = _col("string", "the checkpoint written after the step, if any", null=True)

    def to_row(self) -> dict[str, Any]:
        """The row as the records' writer takes it: column -> value."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> StepRow:
        """A row read back (a dict, or a pandas row): the writer's own columns are left out; a
        column missing from an older row is None where it may be, and so is a null that pandas
        read as NaN (the writer never stores NaN: `step_rules.finite` makes it None)."""
        def value(f: dataclasses.Field) -> Any:
            v = row[f.name]
            return None if f.metadata["null"] and isinstance(v, float) and math.isnan(v) else v

        return cls(**{f.name: value(f) for f in dataclasses.fields(cls) if f.name in row})
