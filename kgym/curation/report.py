"""The funnel report: how many rows reached each stage, why the others left, and the study's figures.

`FunnelReport` is plain data (JSON beside the dataset); `table(report)` renders it with rich, one
line per stage with the study's figure beside it where the study gives one (`sft_dataset` in the
figures file: 6,875 answers of 2,430 modules, 5,389 after normalising, decontaminating and capping,
1,379 verified on an H100, 1,352 kept, 682 gym rows, 2,034 in all, 1,624 faster than torch.compile).
Does not draw (`plot.py`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kgym.curation.funnel_names import STUDY_FIGURES, Label, Stage

# sft_dataset.kimi_k2_kernelbook_funnel, gym_rows, rows and faster_than_torch_compile of the figures file.
STUDY: dict[str, int] = {"source_answers": 6875, "source_modules": 2430, "normalized_decontaminated_capped": 5389,
                         "verified_on_h100": 1379, "kept": 1352, "gym_rows": 682, "rows": 2034,
                         "faster_than_torch_compile": 1624}
_STUDY_OF = {**STUDY_FIGURES, Stage.GYM_ROWS: "gym_rows", Stage.ROWS: "rows",
             Label.FASTER_THAN_COMPILE: "faster_than_torch_compile"}


@dataclass
class FunnelReport:
    counts: dict[str, int] = field(default_factory=lambda: {str(s): 0 for s in Stage})
    labels: dict[str, int] = field(default_factory=lambda: {str(s): 0 for s in Label})
    drops: dict[str, int] = field(default_factory=dict)  # reason (failed:<gate> for gates) -> rows
    skipped: list[str] = field(default_factory=list)  # stages not run, and why
    replay: dict[str, int] = field(default_factory=dict)  # replay counts (episodes, duplicates, ...)
    resumed: int = 0  # verdicts read back from the run's records
    verified: int = 0  # verifications made by this run
    verify_wall_s: float = 0.0
    wall_s: float = 0.0
    device: str = ""

    def drop(self, reason: str, n: int = 1) -> None:
        self.drops[reason] = self.drops.get(reason, 0) + n

    @property
    def seconds_per_verification(self) -> float | None:
        return self.verify_wall_s / self.verified if self.verified else None

    def figures(self) -> dict[str, int]:
        """This run's counts under the figures file's names (`verified_on_h100` is "verified" here:
        the run's own device is `device`), for a side-by-side with `STUDY`."""
        c, lab = self.counts, self.labels
        return {"source_answers": c[Stage.SOURCE_ANSWERS], "source_modules": c[Stage.SOURCE_MODULES],
                "normalized_decontaminated_capped": c[Stage.CAPPED], "verified": c[Stage.VERIFIED],
                "kept": c[Stage.KEPT], "gym_rows": c[Stage.GYM_ROWS], "rows": c[Stage.ROWS],
                "faster_than_torch_compile": lab[Label.FASTER_THAN_COMPILE]}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["funnel"] = self.figures()
        d["seconds_per_verification"] = self.seconds_per_verification
        d["study"] = STUDY
        return d

    def write_json(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(p.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")
        tmp.replace(p)
        return p


def study_figure(name: str) -> int | None:
    key = _STUDY_OF.get(name)
    return STUDY.get(key) if key else None


def table(report: FunnelReport):
    """The report as a rich Table: stages, labels, then the reasons rows left."""
    from rich.table import Table

    t = Table(title="curation funnel", show_lines=False)
    t.add_column("stage")
    t.add_column("rows", justify="right")
    t.add_column("study (Kimi K2 on KernelBook, H100)", justify="right")
    for s in Stage:
        fig = study_figure(s)
        t.add_row(str(s), str(report.counts.get(s, 0)), "" if fig is None else f"{fig:,}")
    t.add_section()
    for lab in Label:
        fig = study_figure(lab)
        t.add_row(f"label: {lab}", str(report.labels.get(lab, 0)), "" if fig is None else f"{fig:,}")
    t.add_section()
    for reason, n in sorted(report.drops.items()):
        t.add_row(f"dropped: {reason}", str(n), "")
    for why in report.skipped:
        t.add_row(f"skipped: {why}", "", "")
    per = report.seconds_per_verification
    t.caption = (f"{report.verified} verified now, {report.resumed} resumed from the records"
                 + (f", {per:.2f} s per verification" if per else "") + f", {report.wall_s:.1f} s in all"
                 + (f", on {report.device}" if report.device else ""))
    return t
