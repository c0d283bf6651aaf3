"""Replay summaries of a run's records: solve rate by family and stage, gate failures, speedups.

Covers computing those tables from a `load()`ed DataFrame and formatting them as text (what
`kgym replay` prints). Rows whose outcome is "error" (kgym failed, not the kernel) are counted but
left out of solve rates and gate failures. Speedups are grouped by where they were timed (`timed_on`:
the GPU's name or the device, and the clock), so a CPU run's interpreter speedups (1e-4..1e-1x: Triton's
interpreter against eager PyTorch) never mix with GPU figures and are labelled as what they are.
Does not read files (`reader.py`) or draw (`plots.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

QUANTILES = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class ReplaySummary:
    evaluations: int  # distinct evaluation ids
    errors: int  # rows where kgym itself failed
    solve_rate: pd.DataFrame  # index (family, stage); columns verdicts, passed, solve_rate
    gate_failures: pd.DataFrame  # index gate; one column per family, plus total
    speedups: pd.DataFrame  # index (timed_on, family, baseline); columns n, p10, p50, p90 (correct candidates)


CPU_NOTE = "Triton's interpreter on the CPU, host clock: says nothing about GPU speed"


def timed_on(df: pd.DataFrame) -> pd.Series:
    """Where each row was timed: "<GPU name or device> (<clock>)", e.g. "NVIDIA H200 (cuda_events)",
    "cpu (host)"; "(not timed)" for rows that never reached timing. Columns missing from old or
    hand-built frames read as unknown."""
    def col(name: str) -> pd.Series:
        return df[name] if name in df.columns else pd.Series(None, index=df.index, dtype=object)

    where = col("gpu_name").fillna(col("device")).fillna("unknown device").astype(str)
    clock = col("timing_clock").fillna("not timed" if "timing_clock" in df.columns else "unknown clock")
    return where + " (" + clock.astype(str) + ")"


def is_cpu_timing(label: str) -> bool:
    """A `timed_on` label of host-clock timing (the CPU path: no CUDA events)."""
    return label.endswith("(host)")


def summarize(df: pd.DataFrame) -> ReplaySummary:
    verdicts = df[df["outcome"] != "error"]
    stage = verdicts["stage"].fillna("none")
    solve = (verdicts.assign(stage=stage).groupby(["family", "stage"])
             .agg(verdicts=("passed", "size"), passed=("passed", "sum")))
    solve["passed"] = solve["passed"].astype(int)
    solve["solve_rate"] = solve["passed"] / solve["verdicts"]
    failed = verdicts[verdicts["outcome"] == "failed"]
    gates = pd.crosstab(failed["gate"], failed["family"]) if len(failed) else pd.DataFrame()
    if len(gates):
        gates["total"] = gates.sum(axis=1)
        gates = gates.sort_values("total", ascending=False)
    correct = verdicts[(verdicts["cases_total"] > 0) & (verdicts["cases_passed"] == verdicts["cases_total"])]
    rows = []
    for (where, family, baseline), values in _speedup_values(correct).items():
        q = values.quantile(list(QUANTILES))
        rows.append({"timed_on": where, "family": family, "baseline": baseline, "n": len(values),
                     **{f"p{int(k * 100)}": q[k] for k in QUANTILES}})
    cols = ["timed_on", "family", "baseline", "n"] + [f"p{int(k * 100)}" for k in QUANTILES]
    speedups = pd.DataFrame(rows, columns=cols).set_index(["timed_on", "family", "baseline"])
    return ReplaySummary(evaluations=len(df), errors=int((df["outcome"] == "error").sum()), solve_rate=solve,
                         gate_failures=gates, speedups=speedups)


def _speedup_values(correct: pd.DataFrame) -> dict[tuple[str, str, str], pd.Series]:
    out = {}
    for (where, family), group in correct.groupby([timed_on(correct), correct["family"]]):
        for baseline in ("eager", "compile"):
            values = group[f"speedup_{baseline}"].dropna()
            if len(values):
                out[(where, family, baseline)] = values.astype(float)
    return out


def format_summary(s: ReplaySummary) -> str:
    lines = [f"evaluations: {s.evaluations} (kgym errors, left out below: {s.errors})", "",
             "solve rate by family and stage:"]
    if len(s.solve_rate):
        for (family, stage), r in s.solve_rate.iterrows():
            passed, n = int(r["passed"]), int(r["verdicts"])
            lines.append(f"  {family:<16} {stage:<10} {passed:>5}/{n:<5} {r['solve_rate']:6.1%}")
    else:
        lines.append("  (no verdicts)")
    lines += ["", "gate failures (first failing gate):"]
    if len(s.gate_failures):
        families = [c for c in s.gate_failures.columns if c != "total"]
        for gate, r in s.gate_failures.iterrows():
            per = ", ".join(f"{f} {int(r[f])}" for f in families if r[f])
            lines.append(f"  {gate:<12} {int(r['total']):>5}   ({per})")
    else:
        lines.append("  (none)")
    lines += ["", "speedup quantiles of correct candidates (p10 / p50 / p90), by where they were timed:"]
    if len(s.speedups):
        for where, table in s.speedups.groupby(level="timed_on", sort=True):
            note = f": {CPU_NOTE}" if is_cpu_timing(where) else ""
            lines.append(f" timed on {where}{note}")
            for (_, family, baseline), r in table.iterrows():
                lines.append(f"  {family:<16} vs {baseline:<8} n={int(r['n']):<5} "
                             f"{r['p10']:.4g} / {r['p50']:.4g} / {r['p90']:.4g}")
    else:
        lines.append("  (no correct candidate was timed)")
    return "\n".join(lines)
