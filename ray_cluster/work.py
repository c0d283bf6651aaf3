"""The units of work that travel through the farm: `EvalRequest` in, `EvalResult` out.

Covers what one evaluation is (task spec as a record's task dict, reference and candidate sources,
public seed, per-item verifier overrides, a free label) and its deterministic evaluation id, what a
worker replies (`WorkerReply`) and what the pool yields (`EvalResult`). All plain, picklable data.
Does not verify, schedule or record anything (`worker.py`, `pool.py`, `sink.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from kgym.records.ids import evaluation_id


@dataclass(frozen=True)
class EvalRequest:
    """One evaluation. `evaluation_id` is derived from (task, candidate, seed, verifier version)."""

    task: Mapping[str, Any]  # a record's task dict (`TaskSpec.to_dict()`): task_id and family at least
    reference: str  # KernelBench-form source
    candidate: str
    seed: int  # the verifier's public seed
    overrides: Mapping[str, Any] = field(default_factory=dict)  # VerifyConfig fields for this item
    label: str = ""  # what the caller calls it (solution, wrong, exploit:<name>): not hashed, not recorded
    evaluation_id: str = ""

    def __post_init__(self) -> None:
        if not self.evaluation_id:
            object.__setattr__(self, "evaluation_id", evaluation_id(self.task, self.candidate, self.seed))

    @classmethod
    def for_task(cls, task: Any, candidate: str, label: str = "", **overrides: Any) -> "EvalRequest":
        """A request for a `kgym.tasks.Task`: its reference, its hybrid allowance and seed."""
        opts = task.verify_options()
        seed = int(opts.pop("seed"))
        opts.update(overrides)
        return cls(task=task.spec.to_dict(), reference=task.reference, candidate=candidate,
                   seed=seed, overrides=opts, label=label)


@dataclass(frozen=True)
class WorkerReply:
    """What a `VerifierWorker` returns for one request: the record row and its own clock."""

    evaluation_id: str
    record: dict[str, Any]  # a `kgym.records.make_record` row
    worker_id: str
    verify_s: float  # wall seconds inside Verifier.verify
    actor_s: float  # wall seconds of the whole actor call (verify + building the row)

    @property
    def farm_error(self) -> str | None:
        """Set when kgym itself failed (Verdict.error): to be retried, never a verdict on the kernel."""
        return self.record.get("error")


@dataclass(frozen=True)
class EvalResult:
    """What the pool yields, once per evaluation id."""

    request: EvalRequest
    record: dict[str, Any]  # the row to write; outcome "error" only when every attempt failed in the farm
    worker_id: str | None
    attempts: int  # calls made for it (1 unless the farm failed)
    verify_s: float | None  # worker-side seconds inside Verifier.verify (last attempt)
    latency_s: float  # driver-side seconds from the last submission to the reply
    farm_error: str | None = None  # why the farm gave up, when it did

    @property
    def evaluation_id(self) -> str:
        return self.request.evaluation_id

    @property
    def outcome(self) -> str:
        return str(self.record["outcome"])
