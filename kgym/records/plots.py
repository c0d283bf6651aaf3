"""PNG figures of a run's records (matplotlib, Agg canvas: no display needed), and the colours they share.

Covers three figures from a `load()`ed DataFrame: solve rate by family and stage, gate failures by
family, and speedups of correct candidates vs eager and vs torch.compile per family, one row of panels
per place they were timed (`replay.timed_on`: a CPU run's interpreter speedups are labelled as such).
Families are rows of horizontal charts, so fourteen or more names never overlap, and each family has
its own colour (`family_colors`, also used by notebooks/replay.ipynb): no two families share one.
Each file is written under a temporary name and renamed. Does not compute the text summary (`replay.py`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import matplotlib
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from kgym.contract.names import FAMILIES
from kgym.records.replay import CPU_NOTE, is_cpu_timing, summarize, timed_on

# The study's fourteen families (kgym.tasks), then the families records give the CLI and KernelBench
# runs. Fixed, so a family keeps its colour from one run's figures to the next.
KNOWN_FAMILIES = (*FAMILIES, "kernelbench", "custom")
# Twenty distinct colours: matplotlib's tab10, then ten darker or paler ones unlike any of them.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#000000", "#0b3d91", "#ffd92f", "#a6cee3", "#fb9a99", "#b2df8a", "#cab2d6", "#67000d",
           "#006d2c", "#fdbf6f")
STAGE_COLORS = {"full": "#1f77b4", "small": "#ff7f0e", "scaffold": "#2ca02c", "epilogue": "#9467bd",
                "none": "#7f7f7f"}
# boxplot's orientation keyword: `orientation` from matplotlib 3.10 (`vert` is deprecated in 3.11)
_HORIZONTAL = ({"orientation": "horizontal"} if tuple(int(x) for x in matplotlib.__version__.split(".")[:2]) >= (3, 10)
               else {"vert": False})
GATE_ORDER = ("policy", "compile", "launch", "isolation", "correctness", "timing", "timeout", "crash")


def family_colors(families: Iterable[str]) -> dict[str, str]:
    """A distinct colour per family: known families keep theirs; others take the unused ones in sorted
    order, and only past twenty families in one figure do colours repeat."""
    families = sorted(set(families))
    fixed = {f: PALETTE[i] for i, f in enumerate(KNOWN_FAMILIES) if i < len(PALETTE)}
    out = {f: fixed[f] for f in families if f in fixed}
    free = [c for c in PALETTE if c not in out.values()] or list(PALETTE)
    for i, f in enumerate(f for f in families if f not in out):
        out[f] = free[i % len(free)]
    return out


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    tmp = path.parent / f".{path.name}.tmp"
    fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    os.replace(tmp, path)
    return path


def _height(rows: int, per_row: float = 0.32, base: float = 1.6) -> float:
    return max(3.0, base + per_row * rows)


def _legend_outside(ax, title: str, ncol: int = 1) -> None:
    """Legend right of the axes, in the order the bars stack or group (top entry = top bar)."""
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], title=title, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              ncol=ncol)


def _log_axis(ax, values) -> None:
    """A log x axis labelled with plain numbers: every 1-9 step within a factor of 8, 1-2-5 steps up to
    2.5 decades, decades over a longer range (matplotlib's default minor labels overlap when the data
    span about a decade, and a narrow range would show a single label)."""
    lo, hi = min(v.min() for v in values), max(v.max() for v in values)
    lo, hi = min(lo, 1.0), max(hi, 1.0)  # the 1x line is always in view
    ratio = (hi / lo) if lo > 0 else 1e9
    ax.set_xscale("log")
    subs = tuple(range(1, 10)) if ratio <= 8 else (1.0, 2.0, 5.0) if ratio <= 300 else (1.0,)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs, numticks=30))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _correct(df: pd.DataFrame) -> pd.DataFrame:
    return df[(df["outcome"] != "error") & (df["cases_total"] > 0) & (df["cases_passed"] == df["cases_total"])]


def solve_rate_figure(df: pd.DataFrame) -> Figure:
    s = summarize(df)
    table = s.solve_rate["solve_rate"].unstack("stage") if len(s.solve_rate) else pd.DataFrame()
    stages = [st for st in STAGE_COLORS if st in table.columns] + sorted(set(table.columns) - set(STAGE_COLORS))
    table = table.reindex(columns=stages).sort_index(ascending=False)  # first family on top
    present = [[st for st in stages if pd.notna(table.loc[f, st])] for f in table.index]
    fig = Figure(figsize=(7.5, _height(sum(len(p) for p in present) * 0.45 + len(table) * 0.3)))
    ax = fig.add_subplot()
    if len(table):
        # Each family's bars are only the stages it has, centred on its label (pandas' grouped barh gave
        # every family a slot per stage of the run, so a family with one stage had its bar off its label).
        colors = {st: STAGE_COLORS.get(st, PALETTE[10 + i % 10]) for i, st in enumerate(stages)}
        height = 0.8 / max(1, max(len(p) for p in present))
        for y, (family, have) in enumerate(zip(table.index, present)):
            for k, st in enumerate(have):
                offset = (k - (len(have) - 1) / 2) * height
                ax.barh(y - offset, table.loc[family, st], height=height * 0.95, color=colors[st],
                        label=st if st not in ax.get_legend_handles_labels()[1] else None)
        ax.set_yticks(range(len(table)), list(table.index))
        ax.set_ylim(-0.6, len(table) - 0.4)
        handles = {lab: h for h, lab in zip(*ax.get_legend_handles_labels())}
        ax.legend([handles[st] for st in stages if st in handles], [st for st in stages if st in handles],
                  title="stage", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.text(0.5, 0.5, "no verdicts", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlim(0, 1.0)
    ax.set_xlabel("solve rate (passed / verdicts)")
    ax.set_ylabel("")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("Solve rate by family and stage")
    return fig


def gate_failures_figure(df: pd.DataFrame) -> Figure:
    s = summarize(df)
    fig = Figure(figsize=(8, 4.2))
    ax = fig.add_subplot()
    if len(s.gate_failures):
        table = s.gate_failures.drop(columns="total")
        order = [g for g in GATE_ORDER if g in table.index] + sorted(set(table.index) - set(GATE_ORDER))
        table = table.reindex(order)
        colors = family_colors(table.columns)
        table.plot.bar(ax=ax, stacked=True, rot=30, color=[colors[f] for f in table.columns], width=0.75)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
        _legend_outside(ax, "family", ncol=1 if len(table.columns) <= 16 else 2)
    else:
        ax.text(0.5, 0.5, "no gate failures", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("first failing gate")
    ax.set_ylabel("failed evaluations")
    ax.set_title("First failing gate, by family")
    return fig


def speedups_figure(df: pd.DataFrame) -> Figure:
    correct = _correct(df)
    where = timed_on(correct)
    places = sorted(where.unique()) if len(correct) else []
    families = sorted(correct["family"].unique(), reverse=True) if len(correct) else []  # first on top
    colors = family_colors(families)
    # A baseline no correct candidate was timed against (torch.compile on a CPU run, where it is not
    # measured) gets no panel of its own, only a line saying so: half the figure was an empty panel.
    baselines = [(b, name) for b, name in (("eager", "eager PyTorch"), ("compile", "torch.compile"))
                 if len(correct) and correct[f"speedup_{b}"].notna().any()]
    missing = [name for b, name in (("eager", "eager PyTorch"), ("compile", "torch.compile"))
               if b not in {x for x, _ in baselines}]
    places = places if baselines else []
    width = 10.5 if len(baselines) == 2 else 6.5
    fig = Figure(figsize=(width, _height(len(families), 0.3) * max(1, len(places))))
    if not places:
        ax = fig.add_subplot()
        ax.text(0.5, 0.5, "no correct candidate was timed", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    axes = fig.subplots(len(places), len(baselines), squeeze=False, sharey=True)
    rows = {family: i + 1 for i, family in enumerate(families)}  # one row per family in every panel
    for row, place in enumerate(places):
        here = correct[where == place]
        for col, (baseline, name) in enumerate(baselines):
            ax = axes[row][col]
            data, fams = [], []
            for family in families:
                values = here.loc[here["family"] == family, f"speedup_{baseline}"].dropna().astype(float)
                if len(values):
                    data.append(values.to_numpy())
                    fams.append(family)
            if data:
                box = ax.boxplot(data, positions=[rows[f] for f in fams], patch_artist=True, widths=0.6, **_HORIZONTAL,
                                 medianprops={"color": "black", "lw": 1.5}, manage_ticks=False)
                for patch, family in zip(box["boxes"], fams):
                    patch.set_facecolor(colors[family])
                    patch.set_alpha(0.75)
                for family, values in zip(fams, data):  # the count, just right of the panel
                    ax.text(1.01, rows[family], f"n={len(values)}", transform=ax.get_yaxis_transform(),
                            ha="left", va="center", fontsize=7, color="dimgray", clip_on=False)
                ax.axvline(1.0, color="grey", lw=0.8, ls="--")
                _log_axis(ax, data)
            else:
                ax.text(0.5, 0.5, f"not timed against {name}", ha="center", va="center", transform=ax.transAxes)
                ax.set_xticks([])
            ax.set_yticks(list(rows.values()), list(rows))
            ax.set_ylim(0.4, len(rows) + 0.6)
            ax.tick_params(axis="y", labelsize=8, labelleft=col == 0)
            ax.set_xlabel(f"speedup vs {name} (x, log)")
            ax.grid(axis="x", alpha=0.3, which="both")
            ax.set_title(f"vs {name}", fontsize=10)
        note = f"\n{CPU_NOTE}" if is_cpu_timing(place) else ""
        axes[row][0].annotate(f"timed on {place}{note}", xy=(0, 1), xycoords="axes fraction", xytext=(0, 22),
                              textcoords="offset points", fontsize=9, fontweight="bold", va="bottom")
    fig.suptitle("Speedup of correct candidates", y=1.0)
    if missing:
        fig.text(0.5, 0.0, f"no data vs {' or '.join(missing)}: no correct candidate was timed against it"
                 + (" (a CPU run does not measure torch.compile)" if "torch.compile" in missing else ""),
                 ha="center", va="top", fontsize=8, color="dimgray")
    fig.tight_layout()
    return fig


def write_plots(df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """solve_rate.png, gate_failures.png and speedups.png in `out_dir`; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [_save(solve_rate_figure(df), out / "solve_rate.png"),
            _save(gate_failures_figure(df), out / "gate_failures.png"),
            _save(speedups_figure(df), out / "speedups.png")]
