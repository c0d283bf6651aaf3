"""PNG figures of a run's records (matplotlib, Agg canvas: no display needed).

Covers three figures from a `load()`ed DataFrame: solve rate by family and stage, gate failures by
family, and speedups of correct candidates vs eager and vs torch.compile per family. Each file is
written under a temporary name and renamed. Does not compute the text summary (`replay.py`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from kgym.records.replay import summarize


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    tmp = path.parent / f".{path.name}.tmp"
    fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    os.replace(tmp, path)
    return path


def write_plots(df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """solve_rate.png, gate_failures.png and speedups.png in `out_dir`; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = summarize(df)
    paths = []

    fig = Figure(figsize=(7, 3.5))
    ax = fig.add_subplot()
    if len(s.solve_rate):
        table = s.solve_rate["solve_rate"].unstack("stage")
        table.plot.bar(ax=ax, rot=0)
        ax.legend(title="stage", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("solve rate")
    ax.set_title("Solve rate by family and stage")
    paths.append(_save(fig, out / "solve_rate.png"))

    fig = Figure(figsize=(7, 3.5))
    ax = fig.add_subplot()
    if len(s.gate_failures):
        s.gate_failures.drop(columns="total").plot.bar(ax=ax, stacked=True, rot=0)
        ax.legend(title="family", fontsize=8)
    else:
        ax.text(0.5, 0.5, "no gate failures", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel("failed evaluations")
    ax.set_title("First failing gate")
    paths.append(_save(fig, out / "gate_failures.png"))

    fig = Figure(figsize=(7, 3.5))
    ax = fig.add_subplot()
    verdicts = df[(df["outcome"] != "error") & (df["cases_total"] > 0) & (df["cases_passed"] == df["cases_total"])]
    labels, data = [], []
    for family, group in verdicts.groupby("family"):
        for baseline in ("eager", "compile"):
            values = group[f"speedup_{baseline}"].dropna().astype(float)
            if len(values):
                labels.append(f"{family}\nvs {baseline}")
                data.append(values.to_numpy())
    if data:
        ax.boxplot(data, tick_labels=labels)
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_yscale("log")
    else:
        ax.text(0.5, 0.5, "no correct candidate was timed", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel("speedup (x)")
    ax.set_title("Speedup of correct candidates vs eager and vs torch.compile")
    paths.append(_save(fig, out / "speedups.png"))
    return paths
