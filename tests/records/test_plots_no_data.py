"""Figures of a small CPU run as the demo makes one (issue 31): each family's solve-rate bar sits on its
own label, and a baseline nothing was timed against (torch.compile on a CPU) is a line saying "no
data", not an empty half of the figure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kgym.records import RecordWriter, load, make_record
from kgym.records.plots import solve_rate_figure, speedups_figure

from records_helpers import task, verdict

STAGES = {"elementwise": "full", "reduction": "small", "scan": "scaffold"}


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("cpu-run")
    with RecordWriter(root, run_id="demo", job_id="tests") as w:
        for seed, (family, stage) in enumerate(STAGES.items()):
            for kind in ("passed", "correctness"):
                v = verdict(kind, 2e-4)
                if v.passed:  # a CPU run measures no torch.compile baseline
                    v = replace(v, timings={k: t for k, t in v.timings.items() if k != "compile"},
                                speedup_compile=None)
                w.write(make_record(task=task(family, stage, seed), candidate_source=f"{kind}{seed}", verdict=v))
    return load(root / "demo")


def test_a_family_with_one_stage_has_its_bar_on_its_label(cpu_run):
    ax = solve_rate_figure(cpu_run).axes[0]
    ticks = {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks())}
    bars = [p for p in ax.patches if p.get_width() > 0]
    assert len(bars) == len(STAGES)
    for bar in bars:
        centre = bar.get_y() + bar.get_height() / 2
        assert min(abs(centre - y) for y in ticks.values()) < 1e-9, (centre, ticks)


def test_no_empty_compile_panel_on_a_cpu_run(cpu_run):
    fig = speedups_figure(cpu_run)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["vs eager PyTorch"], titles
    assert any("no data vs torch.compile" in t.get_text() for t in fig.texts)
