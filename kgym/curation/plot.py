"""The funnel as a picture: this run's counts per stage beside the study's (two bar panels, PNG).

The two panels have their own scales (a sample of a few rows against the study's thousands); each
bar is labelled with its count and, in this run's panel, its share of the source answers. Stages the
study gives no figure for are left out of its panel. Does not compute the counts (`report.py`).
"""

from __future__ import annotations

from pathlib import Path

from kgym.curation.funnel_names import Label, Stage
from kgym.curation.report import FunnelReport, study_figure

_SHOWN = [Stage.SOURCE_ANSWERS, Stage.DECONTAMINATED, Stage.NORMALISED, Stage.CAPPED, Stage.VERIFIED, Stage.KEPT,
          Stage.GYM_ROWS, Stage.ROWS]


def write_plot(report: FunnelReport, path: str | Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [str(s) for s in _SHOWN] + [str(Label.FASTER_THAN_COMPILE)]
    mine = [report.counts.get(s, 0) for s in _SHOWN] + [report.labels.get(Label.FASTER_THAN_COMPILE, 0)]
    study = [study_figure(n) for n in names]
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    y = list(range(len(names)))[::-1]
    a.barh(y, mine, color="#4c72b0")
    top = max(report.counts.get(Stage.SOURCE_ANSWERS, 0), 1)
    for yi, v in zip(y, mine):
        a.text(v, yi, f" {v} ({100 * v / top:.0f}%)", va="center", fontsize=8)
    a.set_yticks(y, names)
    a.set_title("this run")
    a.set_xlim(0, max(mine + [1]) * 1.35)
    b.barh([yi for yi, s in zip(y, study) if s is not None], [s for s in study if s is not None], color="#dd8452")
    for yi, s in zip(y, study):
        if s is not None:
            b.text(s, yi, f" {s:,}", va="center", fontsize=8)
    b.set_title("study: Kimi K2 answers to KernelBook, H100")
    b.set_xlim(0, max(s for s in study if s is not None) * 1.3)
    b.text(0.99, 0.01, "the study's 5,389 counts normalised, decontaminated and capped together",
           transform=b.transAxes, ha="right", va="bottom", fontsize=7, color="0.4")
    per = report.seconds_per_verification
    fig.suptitle("kgym curation funnel" + (f" ({per:.2f} s per verification, {report.device})" if per else ""))
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(out)
    return out
