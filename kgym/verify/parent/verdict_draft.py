"""`VerdictDraft`: the verdict the verifier is deciding, mutable while the gates run; `done()` freezes it.

The contract's `Verdict` is frozen (every hop after the verifier only reads it). The gates fill a
verdict in step by step (a case appended, a stage's seconds added, a note, the first failing gate),
so `Verifier.verify` fills a `VerdictDraft` and hands out `draft.done()` once, at the end. A draft has
the verdict's fields and defaults (its version aside: the verdict takes this verifier's) and the
contract's rule of a failing gate (`kgym.contract.verdict.first_failure`), so the frozen value is what
the same steps made of the mutable verdict before (`tests/test_verdict.py` holds the fields equal).
It never leaves the trusted parent's process. Does not decide anything itself (`verifier.py` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from kgym.contract import CaseResult, Gate, Timing, Verdict
from kgym.contract.verdict import first_failure


@dataclass
class VerdictDraft:
    """`Verdict`'s fields, mutable (see the module docstring)."""

    passed: bool = False
    gate: Gate | None = None
    reason: str = ""
    cases: list[CaseResult] = field(default_factory=list)
    timings: dict[str, Timing | None] = field(default_factory=dict)
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    flagged: bool = False
    error: str | None = None
    device: str = "cpu"
    hybrid: bool = False
    launches: int = 0
    device_launches: int | None = None
    library_calls: int = 0
    stages_s: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def cases_passed(self) -> int:
        return sum(1 for c in self.cases if c.passed)

    def fail(self, gate: Gate | str, reason: str) -> None:
        """A gate failed: the first one decides the gate and the reason, a later one adds a note."""
        self.gate, self.reason, note = first_failure(self.gate, self.reason, gate, reason)
        if note is not None:
            self.notes.append(note)
        self.passed = False

    def supersede(self, gate: Gate, reason: str) -> None:
        """A hard gate found after the verdict was decided: it decides unless a hard gate already did
        (a hard failure scores 0 whatever else failed first); the earlier gate's reason becomes a note."""
        if self.gate is not None and self.gate.is_hard:
            self.fail(gate, reason)
            return
        if self.gate is not None:
            self.notes.append(f"{self.gate.value}: {self.reason[:500]}")
        self.gate, self.reason, self.passed = Gate(gate), reason, False

    def add_stage(self, stage: str, seconds: float) -> None:
        """`seconds` more spent in `stage` (a stage timed in several pieces)."""
        self.stages_s[stage] = self.stages_s.get(stage, 0.0) + seconds

    def done(self) -> Verdict:
        """The frozen verdict, with copies of the collections (the draft cannot change it afterwards)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(cases=tuple(self.cases), notes=tuple(self.notes), timings=dict(self.timings),
                      stages_s=dict(self.stages_s))
        return Verdict(**values)
