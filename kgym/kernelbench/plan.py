"""The evaluation plan: generations matched to a checkout's problems, as work for a verifier.

Each generation becomes either a `kgym.contract.EvalRequest` (a task dict, the problem's source as reference, the
extracted candidate, the public seed and the verifier overrides: `hybrid` for the levels that allow
one cuBLAS/cuDNN call) or, when its answer has no closed python fence, a ready record row failing
the compile gate (so the scores keep it in the denominator without spending a verifier on it).
Plain data: the Ray job (`jobs/eval.py`) sends them to the farm, a local run to one Verifier
(`kgym.records.verify_items`). Covers matching and extraction; does not verify.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgym.contract import EvalRequest, Verdict
from kgym.kernelbench.checkout import Checkout, KernelBenchError, Problem
from kgym.kernelbench.generations import Generation, request_parts

# Levels whose answers may keep exactly one library call (GEMM / conv) in forward(): level 2's
# composite modules, where the study's hybrid answers scored; level 1 is held to pure Triton.
HYBRID_LEVELS = (2, 3, 4)
SEED = 0


@dataclass(frozen=True)
class Plan:
    items: list[EvalRequest]  # to verify
    unanswered: list[dict[str, Any]]  # record rows of answers without code (gate compile)
    problems: int  # distinct (level, problem) pairs covered


def unanswered_row(task: Mapping[str, Any], answer: str, reason: str) -> dict[str, Any]:
    """A record row for an answer that has no code to verify: it failed to compile."""
    from kgym.records.record import make_record

    verdict = Verdict().fail("compile", f"no code to verify: {reason}")
    return make_record(task=task, candidate_source=answer, verdict=verdict, seed=SEED)


def make_plan(checkout: Checkout, generations: Sequence[Generation], *,
              hybrid_levels: Sequence[int] = HYBRID_LEVELS, verify: Mapping[str, Any] | None = None) -> Plan:
    """Match every generation to its problem (an unknown problem is an error) and extract its code."""
    cache: dict[tuple[int, int], Problem] = {}
    by_level: dict[int, dict[int, Problem]] = {}
    for g in generations:
        if g.level not in by_level:
            by_level[g.level] = {p.problem_id: p for p in checkout.problems(g.level)}
        if g.problem_id not in by_level[g.level]:
            raise KernelBenchError(
                f"model {g.model!r}: level {g.level} has no problem {g.problem_id} in {checkout.root}")
        cache[g.key] = by_level[g.level][g.problem_id]
    items, unanswered = [], []
    for g in generations:
        problem = cache[g.key]
        hybrid = problem.level in hybrid_levels
        task, ext = request_parts(problem, g, hybrid=hybrid)
        label = f"{g.model} L{g.level}/{g.problem_id}" + (f" s{g.sample}" if g.sample else "")
        if ext.ok and ext.code:
            items.append(EvalRequest(task=task, reference=problem.source, candidate=ext.code, seed=SEED,
                                  overrides={**dict(verify or {}), "hybrid": hybrid}, label=label))
        else:
            unanswered.append(unanswered_row(task, g.answer, ext.reason))
    return Plan(items=items, unanswered=unanswered, problems=len(cache))
