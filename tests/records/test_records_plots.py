"""Replay figures and summary of a run with all fourteen families, timed on a GPU and on the CPU: every
family has a colour of its own, no two axis labels overlap, legends sit outside the bars, and the
speedups say where they were timed (a CPU run's interpreter speedups are labelled as such)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from kgym.contract import Timing, WorkerInfo
from kgym.records import RecordWriter, load, make_record
from kgym.records.plots import (
    KNOWN_FAMILIES,
    family_colors,
    gate_failures_figure,
    solve_rate_figure,
    speedups_figure,
    write_plots,
)
from kgym.records.replay import CPU_NOTE, format_summary, summarize, timed_on

from records_helpers import task, verdict

FAMILIES = ["elementwise", "reduction", "scan", "normalization", "softmax", "fusion", "matmul", "gemm_epilogue",
            "conv1d", "conv2d", "pool2d", "module", "fused_hybrid", "kernelbook"]
H200 = WorkerInfo(worker_id="verifier-0", host="gpu-node", gpu_name="NVIDIA H200", torch_version="2.11",
                  triton_version="3.6")


def _on_gpu(v):
    return replace(v, device="cuda:0", timings={k: Timing(t.median_ms, t.spread_ms, t.runs, t.stable, "cuda_events",
                                                           t.cached) for k, t in v.timings.items()})


@pytest.fixture(scope="module")
def run14(tmp_path_factory):
    """Rows of every family and stage on the H200 and on the CPU (hand-built verdicts: nothing verified)."""
    root = tmp_path_factory.mktemp("records14")
    with RecordWriter(root, run_id="r14", job_id="tests") as w:
        seed = 0
        for family, stage, gpu in itertools.product(FAMILIES, ("full", "small", "scaffold"), (True, False)):
            for kind, speedup in (("passed", 1.2 if gpu else 2e-4), ("passed", 0.8 if gpu else 3e-3),
                                  (("correctness", "policy", "crash")[seed % 3], 1.0)):
                v = verdict(kind, speedup)
                w.write(make_record(task=task(family, stage, seed), candidate_source=f"s{seed}",
                                    verdict=_on_gpu(v) if gpu else v, worker=H200 if gpu else None))
                seed += 1
    return load(root / "r14")


def _labels_overlap(fig) -> list[tuple[str, str]]:
    """Pairs of tick labels on one axis whose drawn boxes intersect."""
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bad = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
            for (a, ba), (b, bb) in itertools.combinations(boxes, 2):
                if ba.overlaps(bb):
                    bad.append((a, b))
    return bad


def test_family_colors_are_distinct_and_stable():
    colors = family_colors(FAMILIES)
    assert len(set(colors.values())) == 14
    assert family_colors(["softmax"])["softmax"] == colors["softmax"]  # the same colour in any run
    more = family_colors([*KNOWN_FAMILIES, "new_a", "new_b", "new_c", "new_d"])
    assert len(set(more.values())) == 20


def test_fourteen_families_draw_without_overlaps(run14, tmp_path):
    for make in (solve_rate_figure, gate_failures_figure, speedups_figure):
        fig = make(run14)
        assert not _labels_overlap(fig), make.__name__
    paths = write_plots(run14, tmp_path)
    assert [p.name for p in paths] == ["solve_rate.png", "gate_failures.png", "speedups.png"]


def test_gate_failures_use_one_colour_per_family_and_a_legend_outside(run14):
    fig = gate_failures_figure(run14)
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    [ax] = fig.axes
    legend = ax.get_legend()
    names = [t.get_text() for t in legend.get_texts()]
    assert sorted(names) == sorted(FAMILIES)
    colors = {tuple(h.get_facecolor()) for h in legend.legend_handles}
    assert len(colors) == 14
    renderer = fig.canvas.get_renderer()
    assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))


def test_speedups_say_where_they_were_timed(run14):
    assert sorted(timed_on(run14[run14["passed"]]).unique()) == ["NVIDIA H200 (cuda_events)", "cpu (host)"]
    assert sorted(timed_on(run14[~run14["passed"]]).unique()) == ["NVIDIA H200 (not timed)", "cpu (not timed)"]
    s = summarize(run14)
    assert set(s.speedups.index.get_level_values("timed_on")) == {"NVIDIA H200 (cuda_events)", "cpu (host)"}
    cpu = s.speedups.loc[("cpu (host)", "softmax", "eager")]
    assert cpu["p90"] < 0.01  # the interpreter's figures stay apart from the GPU's
    text = format_summary(s)
    assert f"timed on cpu (host): {CPU_NOTE}" in text
    assert " timed on NVIDIA H200 (cuda_events)\n" in text
    fig = speedups_figure(run14)
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("timed on cpu (host)" in t and CPU_NOTE in t for t in texts)
    assert any(t == "timed on NVIDIA H200 (cuda_events)" for t in texts)


def test_timed_on_reads_old_frames_without_the_columns():
    df = pd.DataFrame({"family": ["relu"], "device": ["cpu"]})
    assert list(timed_on(df)) == ["cpu (unknown clock)"]
