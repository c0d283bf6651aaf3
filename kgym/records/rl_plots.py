"""Figures of an RL run's replay (`rl_replay.RLRun`): matplotlib on an Agg canvas, no display needed.

Covers three figures, the analyses of the study's section 6 on one run:
- `progress_figure`: reward and solve rate per family over the steps (points: a family's mean in one
  step; lines: its running mean over its last `window` steps; black: every family, from the step rows);
- `modes_figure`: repair vs single-turn solve rate and the hybrid rate, per window of steps;
- `speed_figure`: per family, the share of solved answers beating eager PyTorch and beating
  torch.compile, one panel per place they were timed (a CPU run's interpreter figures are labelled).
Families keep the colours of `plots.family_colors` (the farm replay's). Does not compute tables
(`rl_replay.py`).
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from kgym.records.plots import _save, family_colors
from kgym.records.replay import CPU_NOTE, is_cpu_timing
from kgym.records.rl_replay import RLRun, solved_speedups, windows

MODE_COLORS = {"single": "#1f77b4", "repair": "#ff7f0e"}


def _window(run: RLRun) -> int:
    last = int(run.steps["step"].max()) if len(run.steps) else 1
    return max(1, last // 10)


def progress_figure(run: RLRun, window: int | None = None) -> Figure:
    """Reward (left) and solve rate (right) per family over the steps."""
    window = window or _window(run)
    e = run.scored
    fig = Figure(figsize=(12, 4.2))
    axes = fig.subplots(1, 2)
    families = sorted(e["family"].unique()) if len(e) else []
    colors = family_colors(families)
    for ax, col, label in ((axes[0], "reward", "mean reward"), (axes[1], "solved", "solve rate")):
        for family in families:
            per = e[e["family"] == family].groupby("step")[col].mean().astype(float)
            ax.scatter(per.index, per.values, s=14, color=colors[family], alpha=0.45, linewidths=0)
            run_mean = per.rolling(window, min_periods=1).mean()
            ax.plot(run_mean.index, run_mean.values, color=colors[family], lw=1.6, label=family,
                    marker="o" if len(per) < 4 else None, ms=3)
        s = run.steps
        step_col = "reward_mean" if col == "reward" else "solve_rate"
        if len(s):
            ax.plot(s["step"], s[step_col].astype(float), color="black", lw=1.0, ls="--", label="all (per step)",
                    marker="o" if len(s) < 4 else None, ms=3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("RL step")
        ax.set_ylabel(label)
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
    axes[0].set_title(f"reward per family (line: mean over its last {window} step(s))", fontsize=10)
    axes[1].set_title("solve rate per family", fontsize=10)
    if families or len(run.steps):
        axes[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="family", frameon=False)
    fig.suptitle(f"{Path(run.path).name}: scored training episodes of {len(run.steps)} committed steps",
                 fontsize=11)
    fig.tight_layout()
    return fig


def modes_figure(run: RLRun) -> Figure:
    """Solve rate of repair vs single-turn episodes (left) and the hybrid rate of solved answers (right),
    per window of steps (all families)."""
    w = windows(run)
    w = w[w["family"] == "all"] if len(w) else w
    fig = Figure(figsize=(12, 3.8))
    axes = fig.subplots(1, 2)
    if len(w):
        x = range(len(w))
        for k, mode in enumerate(("single", "repair")):
            xs = [i + (k - 0.5) * 0.38 for i in x]
            axes[0].bar(xs, w[f"solve_rate_{mode}"].fillna(0), width=0.38,
                        color=MODE_COLORS[mode], label="single-turn" if mode == "single" else "repair")
            _no_data_marks(axes[0], xs, w[f"solve_rate_{mode}"])
        axes[1].bar(list(x), w["hybrid_rate"].fillna(0), width=0.5, color="#2ca02c")
        _no_data_marks(axes[1], list(x), w["hybrid_rate"])
        for ax in axes:
            ax.set_xticks(list(x), [f"steps {s}" for s in w["steps"]], fontsize=8)
    else:  # two empty axes said nothing about why
        for ax in axes:
            ax.text(0.5, 0.5, "no data: no committed step with scored episodes", ha="center", va="center",
                    transform=ax.transAxes, color="dimgray")
            ax.set_xticks([])
    axes[0].set_ylabel("solve rate")
    axes[0].set_ylim(0, 1.05)
    axes[0].set_title("repair vs single-turn solve rate", fontsize=10)
    if len(w):
        axes[0].legend(fontsize=8, frameon=False)
    axes[1].set_ylabel("solved answers with a library call")
    axes[1].set_ylim(0, 1.05)
    axes[1].set_title("hybrid rate (cuBLAS/cuDNN + Triton) of solved answers", fontsize=10)
    for ax in axes:
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def _no_data_marks(ax, xs, values) -> None:
    """A bar with no value (no episode of that mode, no solved answer in the window) says "no data"
    instead of reading as a measured 0, and a measured 0, which draws no bar, says "0"."""
    for x, v in zip(xs, values):
        text = "no data" if v is None or v != v else "0" if v == 0 else None  # v != v: NaN
        if text:
            ax.text(x, 0.02, text, rotation=90 if len(text) > 1 else 0, ha="center", va="bottom", fontsize=7,
                    color="dimgray")


def speed_figure(run: RLRun) -> Figure:
    """Per family: share of solved answers faster than eager and than torch.compile (one panel per
    `timed_on`)."""
    s = solved_speedups(run)
    places = sorted(s["timed_on"].unique()) if len(s) else []
    fams = sorted(s["family"].unique()) if len(s) else []
    fig = Figure(figsize=(7 * max(1, len(places)), 1.8 + 0.35 * max(1, len(fams))))
    axes = fig.subplots(1, max(1, len(places)), squeeze=False)[0]
    if not places:
        axes[0].set_title("no solved answer was timed", fontsize=10)
        axes[0].set_axis_off()
    for ax, where in zip(axes, places):
        g = s[s["timed_on"] == where]
        rows = []
        for family in fams:
            f = g[g["family"] == family]
            nan = float("nan")  # not measured (torch.compile on a CPU run): "no data", not a share of 0
            rows.append((family, (f["speedup_eager"].dropna() > 1).mean() if f["speedup_eager"].notna().any() else nan,
                         (f["speedup_compile"].dropna() > 1).mean() if f["speedup_compile"].notna().any() else nan,
                         len(f)))
        y = list(range(len(rows)))[::-1]
        for k, (offset, color, label) in enumerate(((0.19, "#1f77b4", "beats eager"),
                                                     (-0.19, "#d62728", "beats torch.compile"))):
            ys, shares = [v + offset for v in y], [r[1 + k] for r in rows]
            ax.barh(ys, [0 if v != v else v for v in shares], height=0.38, color=color, label=label)
            for yy, v in zip(ys, shares):
                if v != v:
                    ax.text(0.01, yy, f"{label.removeprefix('beats ')}: no data", va="center", fontsize=7,
                            color="dimgray")
        ax.set_yticks(y, [f"{r[0]} (n={r[3]})" for r in rows], fontsize=8)
        ax.set_xlim(0, 1.05)
        ax.set_xlabel("share of solved answers with speedup > 1")
        note = f"\n{CPU_NOTE}" if is_cpu_timing(where) else ""
        ax.set_title(f"timed on {where}{note}", fontsize=9)
        ax.legend(fontsize=8, frameon=False, loc="lower right")
        ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def write_rl_plots(run: RLRun, out_dir: str | Path) -> list[Path]:
    """rl_progress.png, rl_modes.png and rl_speed.png in `out_dir`; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [_save(progress_figure(run), out / "rl_progress.png"), _save(modes_figure(run), out / "rl_modes.png"),
            _save(speed_figure(run), out / "rl_speed.png")]


__all__ = ["modes_figure", "progress_figure", "speed_figure", "write_rl_plots"]
