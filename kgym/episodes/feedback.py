"""What the model reads about an evaluation: the short status of `submit_kernel` and the details of
`inspect_evaluation`, as text built from a `Verdict`.

The status is one or two lines: passed or the first failing gate with the first line of its reason.
The details give the first failing gate with its full reason (for compile and launch failures, the
compiler traceback), every hidden case with its errors, the first mismatching case's note (where
the values differ, got/want), a diff summary (cases passed at 1e-4 and within 1e-2, the largest
errors), and the timings and speedups when it ran that far. Trimming to a token budget is the
caller's (`budget.trim_to_budget`). Does not compute rewards and never shows the hidden seeds.
"""

from __future__ import annotations

from kgym.contract import Verdict


def _first_line(text: str, limit: int = 240) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def status_text(verdict: Verdict) -> str:
    """One line: passed (cases, speedup) or failed at a gate with the reason's first line."""
    if verdict.error is not None:
        return "error: the evaluation failed inside kgym (not your code's fault); submit again to retry"
    n = len(verdict.cases)
    if verdict.passed:
        speed = f", {verdict.speedup_eager:.2f}x vs eager PyTorch" if verdict.speedup_eager else ""
        return f"passed: {verdict.cases_passed}/{n} hidden cases{speed}"
    where = verdict.gate or "unknown gate"
    cases = f" ({verdict.cases_passed}/{n} hidden cases passed)" if n else ""
    return f"failed at gate {where}{cases}: {_first_line(verdict.reason)}"


def _err(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def details_text(verdict: Verdict, evaluation_id: str) -> str:
    """The full account of one evaluation (untrimmed)."""
    lines = [f"evaluation {evaluation_id}: {'PASSED' if verdict.passed else 'FAILED'}"]
    if verdict.error is not None:
        lines.append("the evaluation failed inside kgym itself (not your code's fault); submit again to retry")
        return "\n".join(lines)
    if verdict.gate is not None:
        lines.append(f"first failing gate: {verdict.gate}")
    if verdict.reason:
        lines += ["reason:", verdict.reason.rstrip()]
    if verdict.cases:
        n = len(verdict.cases)
        loose = sum(1 for c in verdict.cases if c.passed_loose)
        worst_abs = max((c.max_abs_err for c in verdict.cases if c.max_abs_err is not None), default=None)
        worst_rel = max((c.max_rel_err for c in verdict.cases if c.max_rel_err is not None), default=None)
        lines.append(f"diff summary: {verdict.cases_passed}/{n} hidden cases within 1e-4, {loose}/{n} within 1e-2; "
                     f"largest abs error {_err(worst_abs)}, largest rel error {_err(worst_rel)}")
        for c in verdict.cases:
            state = "ok" if c.passed else ("within 1e-2 only" if c.passed_loose else "MISMATCH")
            lines.append(f"  case {c.name}: {state} (max abs err {_err(c.max_abs_err)}, "
                         f"max rel err {_err(c.max_rel_err)})")
        first_bad = next((c for c in verdict.cases if not c.passed), None)
        if first_bad is not None and first_bad.note:
            lines.append(f"first mismatching case {first_bad.name}: {first_bad.note}")
    cand = verdict.timings.get("candidate")
    if cand is not None:
        parts = [f"candidate {cand.median_ms:.4g} ms ({'stable' if cand.stable else 'UNSTABLE'})"]
        for name in ("eager", "compile"):
            t = verdict.timings.get(name)
            if t is not None:
                parts.append(f"{name} {t.median_ms:.4g} ms")
        lines.append("timings: " + ", ".join(parts))
        if verdict.speedup_eager is not None:
            sp = f"speedup {verdict.speedup_eager:.2f}x vs eager"
            if verdict.speedup_compile is not None:
                sp += f", {verdict.speedup_compile:.2f}x vs torch.compile"
            lines.append(sp)
    if verdict.launches:
        lines.append(f"Triton launches in one forward: {verdict.launches}")
    for note in verdict.notes[:5]:
        lines.append(f"note: {note}")
    return "\n".join(lines)
