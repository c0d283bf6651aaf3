"""Replay of an RL run (`python -m jobs.rl`): its steps, episodes and held-out evaluations as tables.

Covers reading the run's three RL tables (`kgym.records.rl_records`: RUN/_rl/{rollouts,steps,evals}) with only
committed steps' rows (a step counts once its done marker names the attempt that wrote it; rows of an
unfinished step or of an attempt a resume superseded are left out and listed), joining the farm's
evaluation rows (`kgym.records.load`: RUN/<family>/) where an episode's first and final evaluations
are needed, and computing what the study's section 6 looks at:

- reward and solve rate per step and per family (over windows of steps, as the study's quarters);
- repair vs single-turn episodes: solve rate and first-answer success;
- the hybrid rate: share of solved answers that made their one library call;
- speedups of solved answers against eager and against torch.compile (beat eager, beat compile,
  compile-yes-but-eager-no, and the eager/compile ratio), grouped by where they were timed;
- staleness, dropped, resampled and all-equal counts; the held-out evaluations with their paired
  bootstrap against the previous one.

Which episodes count: training episodes (`kind == train`) of committed steps that were neither in a
resampled group (replaced, never trained on) nor failed inside kgym (`error` set): the same selection
as the step rows' `solve_rate` (`kgym.training.step_rules.rates`) and the metrics' `kgym_rl_solve_rate_ratio`.
Does not draw (`rl_plots.py`), and does not write anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from kgym.records.replay import CPU_NOTE, is_cpu_timing, timed_on

PHASES = ("generation", "verification", "learning", "sync", "checkpoint", "eval")
WINDOWS = 4  # the study reported its 300-step runs in quarters


@dataclass(frozen=True)
class RLRun:
    """One RL run's committed rows."""

    path: str
    steps: pd.DataFrame  # one row per committed step (STEP_COLUMNS), by step
    episodes: pd.DataFrame  # committed training episodes (ROLLOUT_COLUMNS, kind train), by step
    eval_episodes: pd.DataFrame  # committed held-out evaluation episodes
    evals: pd.DataFrame  # one row per committed held-out evaluation (EVAL_COLUMNS)
    evaluations: pd.DataFrame  # the farm's evaluation rows of the run (kgym.records.load), may be empty
    attempts: int  # launches of the driver (1 + resumes)
    left_out: pd.DataFrame  # rows on disk no done marker counts: table, step, attempt, rows, why

    @property
    def scored(self) -> pd.DataFrame:
        """The episodes rates are computed over (see the module docstring)."""
        e = self.episodes
        if not len(e):
            return e
        return e[~e["group_resampled"].astype(bool) & e["error"].isna()]


def is_rl_run(path: str | Path) -> bool:
    """`path` is a run directory holding RL tables (RUN/_rl/)."""
    from kgym.records.rl_records import RL_DIR

    return (Path(path) / RL_DIR).is_dir()


def load_rl(path: str | Path) -> RLRun:
    """The committed rows of the RL run at `path` (ROOT/<run_id>)."""
    from kgym.records.reader import load as load_evaluations
    from kgym.records.rl_records import RowKind, Table, committed, load, read_raw, rl_location

    path = str(path)
    commit = committed(path)
    episodes = load(path, Table.ROLLOUTS)
    kind = episodes["kind"] if len(episodes) else pd.Series(dtype=object)
    left = []
    for table in (Table.ROLLOUTS, Table.STEPS, Table.EVALS):
        raw = read_raw(path, table)
        if not len(raw):
            continue
        counted = commit.mask(raw)
        out = raw.drop(index=counted.index)
        for (step, attempt), rows in out.groupby(["step", "attempt"]):
            marker = commit.steps.get(int(step))
            why = "unfinished (no done marker)" if marker is None else f"superseded (attempt {marker} counts)"
            left.append({"table": str(table), "step": int(step), "attempt": int(attempt), "rows": len(rows),
                         "why": why})
    loc = rl_location(path)
    attempts_dir = Path(loc.path) / "attempts" if loc.local else None
    attempts = len(list(attempts_dir.glob("attempt-*.json"))) if attempts_dir is not None and attempts_dir.is_dir() \
        else len({a for a in commit.steps.values()})
    try:
        evaluations = load_evaluations(path)
    except (OSError, ValueError):
        evaluations = pd.DataFrame()
    steps = load(path, Table.STEPS)
    return RLRun(path=path, steps=steps, episodes=episodes[kind == str(RowKind.TRAIN)].reset_index(drop=True),
                 eval_episodes=episodes[kind == str(RowKind.EVAL)].reset_index(drop=True),
                 evals=load(path, Table.EVALS), evaluations=evaluations, attempts=attempts,
                 left_out=pd.DataFrame(left, columns=["table", "step", "attempt", "rows", "why"]))


# -- tables ---------------------------------------------------------------------------------------
def _rate(solved: pd.Series) -> float:
    return float(solved.astype(bool).mean()) if len(solved) else float("nan")


def per_step(run: RLRun) -> pd.DataFrame:
    """The step rows' figures, by step: reward, solve rates, hybrid rate, counts and phase seconds."""
    cols = ["step", "attempt", "status", "version_after", "reward_mean", "solve_rate", "solve_rate_single",
            "solve_rate_repair", "hybrid_rate", "groups", "groups_resampled", "samples_trained", "dropped_stale",
            "staleness_max", "generation_tokens_per_s"] + [f"{p}_s" for p in PHASES] + ["step_s"]
    s = run.steps
    if not len(s):
        return pd.DataFrame(columns=cols).set_index("step")
    return s[cols].set_index("step")


def per_family(run: RLRun) -> pd.DataFrame:
    """Scored training episodes per family: episodes, solve rate (all, single, repair), reward, hybrid rate."""
    e = run.scored
    cols = ["steps", "episodes", "solved", "solve_rate", "solve_rate_single", "solve_rate_repair", "reward_mean",
            "hybrid_rate"]
    if not len(e):
        return pd.DataFrame(columns=cols)
    rows = {}
    for family, g in e.groupby("family"):
        solved = g[g["solved"].astype(bool)]
        rows[family] = {"steps": g["step"].nunique(), "episodes": len(g), "solved": int(g["solved"].sum()),
                        "solve_rate": _rate(g["solved"]),
                        "solve_rate_single": _rate(g.loc[g["mode"] == "single", "solved"]),
                        "solve_rate_repair": _rate(g.loc[g["mode"] == "repair", "solved"]),
                        "reward_mean": float(g["reward"].mean()), "hybrid_rate": _hybrid(solved)}
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols).rename_axis("family")


def _hybrid(solved: pd.DataFrame) -> float:
    if not len(solved):
        return float("nan")
    return float((solved["library_calls"].fillna(0) > 0).mean())


def first_passed(run: RLRun) -> pd.Series:
    """Per scored episode (same index): did its first answer pass every gate. An episode that submitted
    nothing did not; None where the farm's row of its first answer is missing (not known)."""
    e = run.scored
    ev = run.evaluations
    if not len(e):
        return pd.Series(None, index=e.index, dtype=object)
    passed = dict(zip(ev["evaluation_id"], ev["passed"].astype(bool))) if len(ev) else {}
    firsts = [ids[0] if ids is not None and len(ids) else None for ids in e["evaluation_ids"]]
    return pd.Series([False if i is None else passed.get(i) for i in firsts], index=e.index, dtype=object)


def per_mode(run: RLRun) -> pd.DataFrame:
    """Repair vs single-turn: episodes, solve rate, first-answer success, mean submissions, mean reward."""
    e = run.scored
    cols = ["episodes", "solved", "solve_rate", "first_ok", "submissions_mean", "reward_mean"]
    if not len(e):
        return pd.DataFrame(columns=cols)
    first = first_passed(run)
    rows = {}
    for mode, g in e.groupby("mode"):
        f = first.loc[g.index].dropna()
        rows[mode] = {"episodes": len(g), "solved": int(g["solved"].sum()), "solve_rate": _rate(g["solved"]),
                      "first_ok": _rate(f) if len(f) else float("nan"),
                      "submissions_mean": float(g["submissions"].mean()), "reward_mean": float(g["reward"].mean())}
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols).rename_axis("mode")


def windows(run: RLRun, n: int = WINDOWS) -> pd.DataFrame:
    """Scored episodes in `n` equal windows of steps (the study's quarters): per window and family,
    episodes, solve rate, reward; family `all` is every family together."""
    e = run.scored
    cols = ["window", "family", "steps", "episodes", "solve_rate", "solve_rate_single", "solve_rate_repair",
            "reward_mean", "hybrid_rate"]
    if not len(e):
        return pd.DataFrame(columns=cols)
    last = int(run.steps["step"].max()) if len(run.steps) else int(e["step"].max())
    n = max(1, min(n, last))
    bounds = [round(last * k / n) for k in range(n + 1)]
    rows = []
    for k in range(n):
        lo, hi = bounds[k] + 1, bounds[k + 1]
        w = e[(e["step"] >= lo) & (e["step"] <= hi)]
        for family, g in [("all", w), *sorted(w.groupby("family"), key=lambda t: t[0])]:
            if not len(g):
                continue
            rows.append({"window": k + 1, "family": family, "steps": f"{lo}-{hi}", "episodes": len(g),
                         "solve_rate": _rate(g["solved"]),
                         "solve_rate_single": _rate(g.loc[g["mode"] == "single", "solved"]),
                         "solve_rate_repair": _rate(g.loc[g["mode"] == "repair", "solved"]),
                         "reward_mean": float(g["reward"].mean()), "hybrid_rate": _hybrid(g[g["solved"].astype(bool)])})
    return pd.DataFrame(rows, columns=cols)


def solved_speedups(run: RLRun) -> pd.DataFrame:
    """Solved scored episodes with their final verdict's speedups, the eager and compile figures of the
    farm's row, and where it was timed (`replay.timed_on`)."""
    e = run.scored
    s = e[e["solved"].astype(bool)][["step", "family", "mode", "final_evaluation_id", "speedup_eager",
                                     "speedup_compile", "library_calls"]].copy()
    ev = run.evaluations
    if len(ev) and len(s):
        farm = ev.set_index("evaluation_id")
        farm = farm[~farm.index.duplicated()]
        ids = s["final_evaluation_id"]
        s["eager_ms"] = ids.map(farm["eager_ms"]).astype(float)
        s["compile_ms"] = ids.map(farm["compile_ms"]).astype(float)
        s["timed_on"] = ids.map(timed_on(farm)).fillna("unknown (no farm row)")
    else:
        s["eager_ms"] = s["compile_ms"] = float("nan")
        s["timed_on"] = "unknown (no farm row)"
    return s


def speed(run: RLRun, by: tuple[str, ...] = ("timed_on",)) -> pd.DataFrame:
    """Per group of solved answers: n (timed), share beating eager, beating torch.compile, beating compile
    but not eager (positive speed credit under a compile baseline while slower than eager: the study's
    26.2%), median speedup vs each, median compile_ms / eager_ms (above 1: compile is the slower one)."""
    s = solved_speedups(run)
    cols = ["n", "beat_eager", "beat_compile", "compile_not_eager", "median_vs_eager", "median_vs_compile",
            "compile_over_eager"]
    rows = {}
    for key, g in (s.groupby(list(by)) if len(s) else []):
        both = g.dropna(subset=["speedup_eager", "speedup_compile"])
        eager = g["speedup_eager"].dropna()
        comp = g["speedup_compile"].dropna()
        ratio = (g["compile_ms"] / g["eager_ms"]).dropna()
        rows[key if len(by) > 1 else (key[0] if isinstance(key, tuple) else key)] = {
            "n": len(g), "beat_eager": float((eager > 1).mean()) if len(eager) else float("nan"),
            "beat_compile": float((comp > 1).mean()) if len(comp) else float("nan"),
            "compile_not_eager": (float(((both["speedup_compile"] > 1) & (both["speedup_eager"] <= 1)).mean())
                                  if len(both) else float("nan")),
            "median_vs_eager": float(eager.median()) if len(eager) else float("nan"),
            "median_vs_compile": float(comp.median()) if len(comp) else float("nan"),
            "compile_over_eager": float(ratio.median()) if len(ratio) else float("nan")}
    out = pd.DataFrame.from_dict(rows, orient="index", columns=cols)
    if len(by) > 1 and len(out):
        out.index = pd.MultiIndex.from_tuples(out.index, names=list(by))
    else:
        out.index.name = by[0]
    return out


def counts(run: RLRun) -> dict[str, Any]:
    """Run-wide counts: steps, episodes, errors, samples, the off-policy bound and the resampler's work."""
    s, e = run.steps, run.episodes

    def total(col: str) -> int:
        return int(s[col].fillna(0).sum()) if len(s) else 0

    return {"steps": len(s), "last_step": int(s["step"].max()) if len(s) else 0, "attempts": run.attempts,
            "episodes": len(e), "episodes_scored": len(run.scored),
            "episodes_error": int(e["error"].notna().sum()) if len(e) else 0,
            "groups": total("groups"), "groups_resampled": total("groups_resampled"),
            "groups_all_equal_kept": total("groups_all_equal_kept"), "samples_trained": total("samples_trained"),
            "dropped_stale": total("dropped_stale"),
            "staleness_max": int(s["staleness_max"].max()) if len(s) and s["staleness_max"].notna().any() else None,
            "verifications": total("verifications"), "generated_tokens": total("generated_tokens"),
            "left_out_steps": sorted({int(x) for x in run.left_out["step"]}) if len(run.left_out) else []}


def phase_seconds(run: RLRun) -> pd.DataFrame:
    """Seconds per phase over the committed steps: total, mean per step, share of the steps' wall time."""
    s = run.steps
    if not len(s):
        return pd.DataFrame(columns=["total_s", "mean_s", "share"])
    wall = float(s["step_s"].sum())
    rows = {p: {"total_s": float(s[f"{p}_s"].sum()), "mean_s": float(s[f"{p}_s"].mean()),
                "share": float(s[f"{p}_s"].sum()) / wall if wall > 0 else float("nan")} for p in PHASES}
    rows["step"] = {"total_s": wall, "mean_s": float(s["step_s"].mean()), "share": 1.0}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("phase")


def held_out(run: RLRun) -> pd.DataFrame:
    cols = ["step", "policy_version", "tasks", "samples", "solve_rate", "solve_rate_std", "reward_mean",
            "previous_step", "delta_pp", "ci95_low_pp", "ci95_high_pp", "gained", "lost"]
    if not len(run.evals):
        return pd.DataFrame(columns=cols).set_index("step")
    return run.evals[cols].set_index("step")


# -- the summary ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class RLSummary:
    path: str
    counts: dict[str, Any]
    per_step: pd.DataFrame
    per_family: pd.DataFrame
    per_mode: pd.DataFrame
    windows: pd.DataFrame
    speed: pd.DataFrame  # by timed_on
    speed_by_family: pd.DataFrame  # by (timed_on, family)
    phases: pd.DataFrame
    held_out: pd.DataFrame
    left_out: pd.DataFrame

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (NaN as null)."""
        def table(df: pd.DataFrame) -> list[dict[str, Any]]:
            flat = df.reset_index() if df.index.name or isinstance(df.index, pd.MultiIndex) else df
            return json.loads(flat.to_json(orient="records"))

        return {"path": self.path, "counts": self.counts, "per_step": table(self.per_step),
                "per_family": table(self.per_family), "per_mode": table(self.per_mode),
                "windows": table(self.windows), "speed": table(self.speed),
                "speed_by_family": table(self.speed_by_family), "phases": table(self.phases),
                "held_out": table(self.held_out), "left_out": table(self.left_out)}


def summarize_rl(run: RLRun) -> RLSummary:
    return RLSummary(path=run.path, counts=counts(run), per_step=per_step(run), per_family=per_family(run),
                     per_mode=per_mode(run), windows=windows(run), speed=speed(run),
                     speed_by_family=speed(run, ("timed_on", "family")), phases=phase_seconds(run),
                     held_out=held_out(run), left_out=run.left_out)


def _pct(v: Any) -> str:
    return "-" if v is None or pd.isna(v) else f"{100 * float(v):.1f}%"


def _num(v: Any, fmt: str = ".3f") -> str:
    return "-" if v is None or pd.isna(v) else format(float(v), fmt)


def _int(v: Any) -> str:
    return "-" if v is None or pd.isna(v) else str(int(v))


def _pp(v: Any) -> str:
    return "-" if v is None or pd.isna(v) else f"{float(v):+.1f}"


def _text(df: pd.DataFrame, formats: dict[str, Any]) -> list[str]:
    """A DataFrame as an aligned plain-text table, two spaces of indent."""
    if not len(df):
        return ["  (none)"]
    shown = df.reset_index() if (df.index.name or isinstance(df.index, pd.MultiIndex)) else df
    cols = [c for c in shown.columns if c in formats]
    cells = [[str(c) for c in cols]] + [[formats[c](r[c]) for c in cols] for _, r in shown.iterrows()]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cols))]
    lines = []
    for row in cells:
        lines.append("  " + "  ".join(v.ljust(w) if i == 0 else v.rjust(w)
                                      for i, (v, w) in enumerate(zip(row, widths))))
    return lines


def format_rl_summary(s: RLSummary) -> str:
    c = s.counts
    lines = [f"RL run {s.path}: {c['steps']} committed steps (last {c['last_step']}), {c['attempts']} attempt(s); "
             f"{c['episodes']} training episodes ({c['episodes_scored']} scored, {c['episodes_error']} kgym errors), "
             f"{c['verifications']} verifications, {c['generated_tokens']} generated tokens"]
    if len(s.left_out):
        lines.append("left out (rows no done marker counts):")
        lines += _text(s.left_out, {"table": str, "step": _int, "attempt": _int, "rows": _int, "why": str})
    lines += ["", f"groups {c['groups']}, resampled (all answers scored the same) {c['groups_resampled']}, "
                  f"all-equal kept {c['groups_all_equal_kept']}; samples trained {c['samples_trained']}, "
                  f"dropped as stale {c['dropped_stale']}, largest staleness "
                  f"{'-' if c['staleness_max'] is None else c['staleness_max']} version(s)"]
    lines += ["", "per step:"]
    lines += _text(s.per_step, {"step": _int, "attempt": _int, "status": str, "reward_mean": _num,
                                "solve_rate": _pct, "solve_rate_single": _pct, "solve_rate_repair": _pct,
                                "hybrid_rate": _pct, "groups_resampled": _int, "samples_trained": _int,
                                "dropped_stale": _int, "staleness_max": _int, "step_s": lambda v: _num(v, ".1f")})
    lines += ["", "per family (scored training episodes):"]
    lines += _text(s.per_family, {"family": str, "steps": _int, "episodes": _int, "solve_rate": _pct,
                                  "solve_rate_single": _pct, "solve_rate_repair": _pct, "reward_mean": _num,
                                  "hybrid_rate": _pct})
    lines += ["", "by window of steps (the study's quarters), all families:"]
    lines += _text(s.windows[s.windows["family"] == "all"] if len(s.windows) else s.windows,
                   {"steps": str, "episodes": _int, "solve_rate": _pct, "solve_rate_single": _pct,
                    "solve_rate_repair": _pct, "reward_mean": _num, "hybrid_rate": _pct})
    lines += ["", "repair vs single-turn (first_ok: the first answer passed):"]
    lines += _text(s.per_mode, {"mode": str, "episodes": _int, "solve_rate": _pct, "first_ok": _pct,
                                "submissions_mean": lambda v: _num(v, ".2f"), "reward_mean": _num})
    lines += ["", "speed of solved answers (beat: speedup > 1; compile_not_eager: beats torch.compile, not eager; "
                  "compile_over_eager: median compile ms / eager ms):"]
    fmt = {"timed_on": str, "family": str, "n": _int, "beat_eager": _pct, "beat_compile": _pct,
           "compile_not_eager": _pct, "median_vs_eager": lambda v: _num(v, ".4g"),
           "median_vs_compile": lambda v: _num(v, ".4g"), "compile_over_eager": lambda v: _num(v, ".3g")}
    lines += _text(s.speed, fmt)
    if any(is_cpu_timing(str(w)) for w in s.speed.index):
        lines.append(f"  (cpu (host): {CPU_NOTE})")
    if len(s.speed_by_family):
        lines += ["  by family:"] + ["  " + ln for ln in _text(s.speed_by_family, fmt)]
    lines += ["", "step time by phase (committed steps):"]
    lines += _text(s.phases, {"phase": str, "total_s": lambda v: _num(v, ".1f"), "mean_s": lambda v: _num(v, ".2f"),
                              "share": _pct})
    lines += ["", "held-out evaluations (delta: percentage points against the previous one, 95% paired bootstrap "
                  "over tasks):"]
    lines += _text(s.held_out, {"step": _int, "policy_version": _int, "tasks": _int, "samples": _int,
                                "solve_rate": _pct, "solve_rate_std": _pct, "reward_mean": _num,
                                "previous_step": _int, "delta_pp": _pp, "ci95_low_pp": _pp, "ci95_high_pp": _pp,
                                "gained": _int, "lost": _int})
    return "\n".join(lines)


__all__ = ["RLRun", "RLSummary", "counts", "first_passed", "format_rl_summary", "held_out", "is_rl_run", "load_rl",
           "per_family", "per_mode", "per_step", "phase_seconds", "solved_speedups", "speed", "summarize_rl",
           "windows"]
