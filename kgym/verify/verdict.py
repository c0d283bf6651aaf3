"""The verdict: what `kgym.verify` says about one candidate, as plain serialisable data.

Covers the result types (gates, per-case results, timings, the verdict itself) and their JSON form.
Does not compute anything: the gates fill these in, `kgym.reward` turns them into a number.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

VERIFIER_VERSION = "kgym-verify-1"

# Gates in the order they are checked; `gate` in a verdict is the first one that failed.
GATES = ("policy", "compile", "launch", "isolation", "correctness", "timing")
# Failure kinds that are not a gate of their own: the child hung or died.
FAILURE_KINDS = GATES + ("timeout", "crash")
# Gates that are hard in the reward: failing one scores 0 whatever else happened.
HARD_GATES = ("policy", "compile", "launch", "isolation", "timeout", "crash")


@dataclass(frozen=True)
class CaseResult:
    """One hidden case compared in the trusted parent."""

    name: str
    passed: bool
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    passed_loose: bool = False  # within the 1e-2 tolerance used for group partial credit
    order: str = "reference_first"  # which side ran first on this case
    note: str = ""  # why it failed, when it did (shape, dtype, NaN, mutated input, ...)


@dataclass(frozen=True)
class Timing:
    """Median and spread of one timed function, in milliseconds."""

    median_ms: float
    spread_ms: float  # p90 - p10 over the timed runs
    runs: int
    stable: bool
    clock: str  # "cuda_events" or "host"
    cached: bool = False  # baseline read from the on-disk cache


@dataclass
class Verdict:
    """Everything decided about one candidate. `error` is set only for a failure of kgym itself."""

    passed: bool = False
    gate: str | None = None
    reason: str = ""
    cases: list[CaseResult] = field(default_factory=list)
    timings: dict[str, Timing | None] = field(default_factory=dict)
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    flagged: bool = False
    reward: float = 0.0
    error: str | None = None
    device: str = "cpu"
    hybrid: bool = False
    baseline: str = "eager"
    launches: int = 0  # Triton launches counted in the first forward
    device_launches: int | None = None  # Triton kernels seen on the device by the profiler (GPU)
    library_calls: int = 0  # cuBLAS/cuDNN calls seen by the guard (hybrid tasks)
    stages_s: dict[str, float] = field(default_factory=dict)  # wall time per stage of verify
    notes: list[str] = field(default_factory=list)
    verifier_version: str = VERIFIER_VERSION

    @property
    def cases_passed(self) -> int:
        return sum(1 for c in self.cases if c.passed)

    @property
    def fraction_passed(self) -> float:
        return self.cases_passed / len(self.cases) if self.cases else 0.0

    def fail(self, gate: str, reason: str) -> "Verdict":
        """Record the first failing gate (later failures only add to the reason)."""
        if gate not in FAILURE_KINDS:
            raise ValueError(f"unknown gate {gate!r}")
        if self.gate is None:
            self.gate = gate
            self.reason = reason
        elif reason and reason not in self.reason:
            self.notes.append(f"{gate}: {reason[:500]}")
        self.passed = False
        return self

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["cases_passed"] = self.cases_passed
        return d

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Verdict":
        d = dict(d)
        d.pop("cases_passed", None)
        d["cases"] = [CaseResult(**c) for c in d.get("cases", [])]
        d["timings"] = {k: (Timing(**v) if v else None) for k, v in d.get("timings", {}).items()}
        return cls(**d)
