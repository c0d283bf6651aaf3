"""The demo's closing tables: solve rate and gate outcomes per family, and the exploits' verdicts.

Covers turning the demo's results into `rich` tables and checking them against what each answer is
expected to get (reference solutions pass, known-wrong answers and exploits are rejected). Does not
run anything.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.table import Table

if TYPE_CHECKING:  # importing ray_cluster imports Ray: `kgym --help` must not pay for it
    from kgym.contract import EvalResult


@dataclass(frozen=True)
class Expectation:
    kind: str  # solution | wrong | exploit
    name: str  # task id, or the exploit's file stem
    expected_gate: str | None = None  # exploits: the gate that should reject it (None: any rejection)


def gate_of(r: EvalResult) -> str:
    if r.outcome == "error":
        return "error"
    return r.verdict.gate or "passed"


def unmet(results: Sequence[EvalResult], expectations: dict[str, Expectation]) -> list[str]:
    """Why a result differs from what its answer should get (empty when all is as expected)."""
    bad = []
    for r in results:
        e = expectations[r.evaluation_id]
        g = gate_of(r)
        if g == "error":
            bad.append(f"{e.kind} {e.name}: the farm failed ({r.farm_error})")
        elif e.kind == "solution" and g != "passed":
            bad.append(f"reference solution of {e.name} failed at {g}: {str(r.verdict.reason)[:200]}")
        elif e.kind != "solution" and g == "passed":
            bad.append(f"{e.kind} answer {e.name} passed")
        elif e.kind == "exploit" and e.expected_gate and g != e.expected_gate:
            bad.append(f"exploit {e.name} rejected at {g}, expected {e.expected_gate}")
    return bad


def family_table(results: Sequence[EvalResult], expectations: dict[str, Expectation]) -> Table:
    t = Table(title="Per family: reference solutions and known-wrong answers (exploits apart, below)")
    for col, just in (("family", "left"), ("task (stage)", "left"), ("n", "right"), ("solve rate", "right"),
                      ("gate outcomes", "left"), ("as expected", "left")):
        t.add_column(col, justify=just)
    by_family: dict[str, list[EvalResult]] = collections.defaultdict(list)
    for r in results:
        if expectations[r.evaluation_id].kind != "exploit":
            by_family[str(r.request.task["family"])].append(r)
    for family in sorted(by_family):
        rs = by_family[family]
        gates = collections.Counter(gate_of(r) for r in rs)
        verdicts = [r for r in rs if r.outcome != "error"]
        rate = sum(r.outcome == "passed" for r in verdicts) / len(verdicts) if verdicts else 0.0
        tasks = ", ".join(sorted({f"{r.request.task['task_id']} ({r.request.task.get('stage')})" for r in rs}))
        ok = not unmet(rs, expectations)
        t.add_row(family, tasks, str(len(rs)), f"{rate:.2f}", ", ".join(f"{g} {n}" for g, n in sorted(gates.items())),
                  "yes" if ok else "[red]NO[/]")
    return t


def exploit_table(results: Sequence[EvalResult], expectations: dict[str, Expectation]) -> Table:
    t = Table(title="Exploits (hostile answers to the relu task)")
    for col in ("exploit", "expected gate", "verdict"):
        t.add_column(col)
    for r in sorted(results, key=lambda r: expectations[r.evaluation_id].name):
        e = expectations[r.evaluation_id]
        if e.kind != "exploit":
            continue
        g = gate_of(r)
        ok = g == (e.expected_gate or g) and g not in ("passed", "error")
        t.add_row(e.name, e.expected_gate or "any", f"rejected at {g}" if ok else f"[red]UNEXPECTED: {g}[/]")
    return t
