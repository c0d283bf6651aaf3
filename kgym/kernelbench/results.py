"""Records -> one `ProblemResult` per (model, level, problem, sample): what the scores count.

Covers reading the `kernelbench` rows of a records table (`kgym.records.load`) and deciding, per
answer, what KernelBench's counters ask: compiled (got past the policy, compile and launch gates),
correct (every hidden case passed and no gate before timing failed), its speedups over eager and
torch.compile (kept only when correct), and whether it keeps a PyTorch op (`hybrid.py`). A row the
farm gave up on (outcome "error") counts as neither compiled nor correct and is marked `error`.
Does not aggregate (`scoring.py`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kgym.kernelbench.hybrid import keeps_torch_op

NOT_COMPILED_GATES = ("policy", "compile", "launch")


@dataclass(frozen=True)
class ProblemResult:
    model: str
    level: int
    problem_id: int
    compiled: bool
    correct: bool
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    keeps_torch_op: bool = False
    sample: int = 0
    gate: str | None = None
    error: bool = False

    @property
    def key(self) -> tuple[int, int]:
        return (self.level, self.problem_id)


def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def result_from_row(row: Mapping[str, Any]) -> ProblemResult:
    """One record row (a dict of `kgym.records` columns) of family kernelbench as a result."""
    task = json.loads(row["task_json"])
    error = row.get("outcome") == "error"
    gate = row.get("gate")
    gate = None if gate is None or (isinstance(gate, float) and math.isnan(gate)) else str(gate)
    total, passed = int(row.get("cases_total") or 0), int(row.get("cases_passed") or 0)
    compiled = not error and gate not in NOT_COMPILED_GATES
    correct = compiled and total > 0 and passed == total and gate in (None, "timing")
    return ProblemResult(
        model=str(task["model"]), level=int(task["level"]), problem_id=int(task["problem_id"]),
        sample=int(task.get("sample") or 0), compiled=compiled, correct=correct,
        speedup_eager=_num(row.get("speedup_eager")) if correct else None,
        speedup_compile=_num(row.get("speedup_compile")) if correct else None,
        keeps_torch_op=keeps_torch_op(row.get("candidate_source")), gate=gate, error=error)


def results_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[ProblemResult]:
    return [result_from_row(r) for r in rows if r.get("family") == "kernelbench"]


def results_from_records(df: Any) -> list[ProblemResult]:
    """From a `kgym.records.load(...)` DataFrame (one row per evaluation id)."""
    return results_from_rows(df.to_dict("records"))
