"""The verdict: what the verifier says about one candidate, as plain serialisable data.

Covers the result types (per-case results, timings, the verdict itself) and their dict/JSON form.
A verdict holds no reward: `kgym.reward.reward(verdict, config)` computes one, so a stored verdict
can be scored again under another `RewardConfig`. Does not compute anything (`kgym.verify` fills
these in). Imports neither torch nor Ray.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from kgym.contract.names import FAILURE_KINDS, Gate
from kgym.contract.version import VERIFIER_VERSION


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
    gate: Gate | None = None
    reason: str = ""
    cases: list[CaseResult] = field(default_factory=list)
    timings: dict[str, Timing | None] = field(default_factory=dict)
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    flagged: bool = False  # a speedup above the verifier's suspicion threshold (see kgym.verify)
    error: str | None = None
    device: str = "cpu"
    hybrid: bool = False
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

    @property
    def hard_failure(self) -> bool:
        """kgym failed, or the candidate failed a hard gate: nothing of it may be scored."""
        return self.error is not None or (self.gate is not None and Gate(self.gate).is_hard)

    def fail(self, gate: Gate | str, reason: str) -> Verdict:
        """Record the first failing gate (later failures only add to the reason)."""
        if gate not in FAILURE_KINDS:
            raise ValueError(f"unknown gate {gate!r}: one of {', '.join(FAILURE_KINDS)}")
        if self.gate is None:
            self.gate = Gate(gate)
            self.reason = reason
        elif reason and reason not in self.reason:
            self.notes.append(f"{gate}: {reason[:500]}")
        self.passed = False
        return self

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["gate"] = None if self.gate is None else str(self.gate)
        d["cases_passed"] = self.cases_passed
        return d

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        """The inverse of `to_dict`. Keys of no field are refused (a different schema is a bug)."""
        d = dict(d)
        d.pop("cases_passed", None)
        unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"not fields of a Verdict: {', '.join(sorted(unknown))}")
        d["cases"] = [CaseResult(**c) for c in d.get("cases", [])]
        d["timings"] = {k: (Timing(**v) if v else None) for k, v in d.get("timings", {}).items()}
        if d.get("gate") is not None:
            d["gate"] = Gate(d["gate"])
        return cls(**d)
