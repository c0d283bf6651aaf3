"""The funnel on the synthetic KernelBook file: every row lands where it should, the counts add up,
the dataset reads as an HF chat dataset, the report renders as a table and a plot."""

from __future__ import annotations

import json

import pytest
import synthetic

from kgym.answers import extract_code
from kgym.curation import Drop, Label, Stage, table


def expected(with_kb: bool) -> dict:
    return {u: d for u, d in synthetic.EXPECTED.items() if with_kb or u != "contaminated"}


def test_every_row_lands_where_it_should(curated):
    want = expected(curated.with_kernelbench)
    got = {f.uuid: f.dropped for f in curated.result.fates}
    assert got == want, {f.uuid: (f.dropped, f.detail) for f in curated.result.fates}
    fate = curated.result.fate_of
    assert fate("wrong").detail.startswith("correctness")
    assert fate("hybrid").ast_hybrid and fate("hybrid").answer_mode == "hybrid"
    assert fate("good-1").answer_mode == fate("good-2").answer_mode == "triton"
    assert "tokens > 4096" in fate("long").detail  # verified first, then too long
    assert fate("long").evaluation_id is not None
    if curated.with_kernelbench:
        assert fate("contaminated").detail.startswith("level1/19_ReLU.py")


def test_counts_add_up(curated):
    r = curated.result.report
    with_kb = curated.with_kernelbench
    answers = 9 if with_kb else 8  # every row but no-answer
    assert r.counts[Stage.SOURCE_ANSWERS] == answers
    assert r.counts[Stage.SOURCE_MODULES] == (7 if with_kb else 6) - 1  # duplicate and over-cap share good-1's module
    assert r.counts[Stage.DECONTAMINATED] == 8
    assert r.counts[Stage.NORMALISED] == 7  # broken left
    assert r.counts[Stage.CAPPED] == 5  # duplicate and over-cap left
    assert r.counts[Stage.VERIFIED] == 4  # wrong left
    assert r.counts[Stage.KEPT] == r.counts[Stage.ROWS] == 3  # long left
    assert r.labels[Label.HYBRID] == 1
    assert r.drops == {k: 1 for k in (Drop.DUPLICATE, Drop.OVER_CAP, Drop.NO_ANSWER, Drop.NOT_NORMALISED,
                                      Drop.TOO_LONG, "failed:correctness")} | (
        {Drop.CONTAMINATED: 1} if with_kb else {})
    assert r.verified == 5 and r.resumed == 0  # good-1, good-2, hybrid, wrong, long


def test_dataset_is_an_hf_chat_dataset(curated):
    datasets = pytest.importorskip("datasets")
    ds = datasets.load_dataset("parquet", data_files=str(curated.result.dataset), split="train")
    assert len(ds) == 3 and set(ds["uuid"]) == {"good-1", "good-2", "hybrid"}
    for row in ds:
        assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
        code = extract_code(row["messages"][2]["content"]).code
        assert "class ModelNew(" in code and "@triton.jit" in code
        assert "class Model(" in row["messages"][1]["content"]  # the KernelBench-form reference
        assert 0 < row["n_tokens"] <= 4096
    hybrid = next(r for r in ds if r["uuid"] == "hybrid")
    assert hybrid["answer_mode"] == "hybrid" and "exactly one library call" in hybrid["messages"][1]["content"]


def test_report_table_json_and_plot(curated):
    from rich.console import Console

    console = Console(record=True, width=120)
    console.print(table(curated.result.report))
    text = console.export_text()
    assert "verified" in text and "1,379" in text and "failed:correctness" in text
    saved = json.loads(curated.result.report_json.read_text())
    assert saved["funnel"]["normalized_decontaminated_capped"] == 5 and saved["study"]["kept"] == 1352
    png = curated.result.plot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
