"""The units of work that travel through the farm: `EvalRequest` in, `EvalResult` out.

Covers what one evaluation is (the task spec as a plain dict, the reference and candidate sources,
the verifier's public seed, per-request verifier overrides, where it sits in an episode, a free
label) and its deterministic evaluation id; what a worker replies (`WorkerReply`: a verdict plus who
verified it and when); and what the farm gives back per evaluation id (`EvalResult`). All plain,
picklable data. Does not verify, schedule, score or record anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kgym.contract.ids import evaluation_id
from kgym.contract.names import Outcome
from kgym.contract.verdict import Verdict
from kgym.contract.worker_info import WorkerInfo


@dataclass(frozen=True)
class Episode:
    """Where an evaluation sits in an RL episode: its group, its index in the group, its turn."""

    group_id: str
    sample_index: int
    turn: int = 0


@dataclass(frozen=True)
class EvalRequest:
    """One evaluation. `evaluation_id` is derived from (task, candidate, seed, verifier version, and the
    hidden cases' salt when the overrides give one)."""

    task: Mapping[str, Any]  # a task spec as a dict (`TaskSpec.to_dict()`): task_id and family at least
    reference: str  # KernelBench-form source
    candidate: str
    seed: int  # the verifier's public seed
    overrides: Mapping[str, Any] = field(default_factory=dict)  # VerifyConfig fields for this request
    label: str = ""  # what the caller calls it (solution, wrong, exploit:<name>): not hashed, not recorded
    episode: Episode | None = None  # set when the request comes from an episode
    evaluation_id: str = ""

    def __post_init__(self) -> None:
        if "task_id" not in self.task or "family" not in self.task:
            raise ValueError("an EvalRequest's task needs at least task_id and family")
        if not self.evaluation_id:
            object.__setattr__(self, "evaluation_id", evaluation_id(self.task, self.candidate, self.seed,
                                                                    case_salt=str(self.overrides.get("case_salt", ""))))

    @classmethod
    def for_task(cls, task: Any, candidate: str, label: str = "", episode: Episode | None = None,
                 **overrides: Any) -> EvalRequest:
        """A request for a `kgym.tasks.Task`: its reference, its hybrid allowance and its seed."""
        opts = dict(task.verify_options())
        seed = int(opts.pop("seed"))
        opts.update(overrides)
        return cls(task=task.spec.to_dict(), reference=task.reference, candidate=candidate, seed=seed,
                   overrides=opts, label=label, episode=episode)


@dataclass(frozen=True)
class WorkerReply:
    """What a verifier worker returns for one request."""

    evaluation_id: str
    verdict: Verdict
    worker: WorkerInfo
    verify_s: float  # wall seconds inside Verifier.verify
    started_at: float  # POSIX seconds
    finished_at: float

    @property
    def farm_error(self) -> str | None:
        """Set when kgym itself failed (Verdict.error): to be retried, never a verdict on the kernel."""
        return self.verdict.error


@dataclass(frozen=True)
class EvalResult:
    """What the farm gives back, once per evaluation id."""

    request: EvalRequest
    verdict: Verdict  # with `error` set only when every attempt failed in the farm
    worker: WorkerInfo | None  # None when the farm gave up before any worker answered
    attempts: int  # calls made for it (1 unless the farm failed)
    verify_s: float | None  # worker-side seconds inside Verifier.verify (last attempt)
    latency_s: float  # seconds from the last submission to the reply, on the farm's clock
    started_at: float | None = None  # POSIX seconds, the worker's clock
    finished_at: float | None = None
    farm_error: str | None = None  # why the farm gave up, when it did

    @property
    def evaluation_id(self) -> str:
        return self.request.evaluation_id

    @property
    def outcome(self) -> Outcome:
        if self.verdict.error is not None:
            return Outcome.ERROR
        return Outcome.PASSED if self.verdict.passed else Outcome.FAILED

    @property
    def worker_id(self) -> str | None:
        return self.worker.worker_id if self.worker else None
