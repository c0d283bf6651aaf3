"""The verdict: what the verifier says about one candidate, as plain serialisable data.

Covers the result types (per-case results, timings, the verdict itself) and their dict/JSON form,
and the rule of a failing gate (`first_failure`: the first decides, later ones only add a note).
A verdict holds no reward: `kgym.reward.reward(verdict, config)` computes one, so a stored verdict
can be scored again under another `RewardConfig`. Every type here is frozen, the verdict included:
its cases and notes are tuples, and `fail` returns a new verdict. The verifier decides a verdict in a
mutable draft of its own (`kgym.verify.parent.verdict_draft`) and hands out the frozen value when done.
Does not compute anything (`kgym.verify` fills these in). Imports neither torch nor Ray.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
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


def usable_baseline(t: Timing) -> bool:
    """May a baseline figure stand for a speedup? The one rule for the cache (what it keeps and reads
    back), the reward (what it pays against), the records' `eager_stable`/`compile_stable` columns and
    the baselines table's `stable` column (what a join fills in). Stable under the variation gate, and
    a positive median with a spread at most that median: the gate's 30 us floor lets a sub-0.3 ms figure
    through with a spread over its median, and such an entry "agrees" with every re-measure."""
    return (type(t.stable) is bool and t.stable and isinstance(t.median_ms, (int, float))
            and isinstance(t.spread_ms, (int, float)) and 0 < t.median_ms and 0 <= t.spread_ms <= t.median_ms)


UNSTABLE_BASELINE = "the {kind} baseline's run-to-run variation"  # the note's prefix (since issue 29)


def unstable_baseline_note(kind: str, t: Timing) -> str:
    """The verdict's note that its `kind` baseline was not usable (unstable, or spread over median): no
    speed credit is paid against it. A stored row keeps no baseline's stability, only its notes, so
    `kgym.records.verdict_from_record` reads the instability back from this note (`UNSTABLE_BASELINE`)."""
    return (f"{UNSTABLE_BASELINE.format(kind=kind)} ({t.spread_ms:.4g} ms p90-p10 at a median of {t.median_ms:.4g} "
            f"ms) exceeds the variation gate or its median: it was not cached and earns no speed credit against it")


def first_failure(gate_now: Gate | None, reason_now: str, gate: Gate | str, reason: str
                  ) -> tuple[Gate, str, str | None]:
    """A gate fails on a verdict whose gate is `gate_now` (None: none failed yet) with reason
    `reason_now`: the verdict's gate and reason after it, and the note to add (None: none). The first
    failing gate decides; a later one only adds its reason as a note, when that says something new."""
    if gate not in FAILURE_KINDS:
        raise ValueError(f"unknown gate {gate!r}: one of {', '.join(FAILURE_KINDS)}")
    if gate_now is None:
        return Gate(gate), reason, None
    note = f"{gate}: {reason[:500]}" if reason and reason not in reason_now else None
    return gate_now, reason_now, note


@dataclass(frozen=True)
class Verdict:
    """Everything decided about one candidate. `error` is set only for a failure of kgym itself."""

    passed: bool = False
    gate: Gate | None = None
    reason: str = ""
    cases: tuple[CaseResult, ...] = ()
    timings: Mapping[str, Timing | None] = field(default_factory=dict)
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    flagged: bool = False  # a speedup above the verifier's suspicion threshold (see kgym.verify)
    error: str | None = None
    device: str = "cpu"
    hybrid: bool = False
    launches: int = 0  # Triton launches counted in the first forward
    device_launches: int | None = None  # Triton kernels seen on the device by the profiler (GPU)
    library_calls: int = 0  # cuBLAS/cuDNN calls seen by the guard (hybrid tasks)
    stages_s: Mapping[str, float] = field(default_factory=dict)  # wall time per stage of verify
    notes: tuple[str, ...] = ()
    verifier_version: str = VERIFIER_VERSION

    def __post_init__(self) -> None:
        # Lists are taken (a caller's, a record's, JSON's) and kept as tuples: nothing appends to a verdict.
        object.__setattr__(self, "cases", tuple(self.cases))
        object.__setattr__(self, "notes", tuple(self.notes))

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
        """This verdict failed at `gate` (`first_failure`: the first failing gate decides, later ones add
        a note), as a new verdict."""
        gate_, reason_, note = first_failure(self.gate, self.reason, gate, reason)
        notes = self.notes if note is None else (*self.notes, note)
        return dataclasses.replace(self, passed=False, gate=gate_, reason=reason_, notes=notes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["cases"], d["notes"] = list(d["cases"]), list(d["notes"])  # the JSON form's lists, as a dict too
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
