"""A tiny evaluation end to end: generations of two models over the fake checkout, through the real
verifier on the CPU (Triton interpreter, tiny shapes), into records Parquet, back out as the score
table and the paired comparison — by the library and by `kgym eval score/compare`."""

from __future__ import annotations

import json

import pytest

from kgym.cli import main
from kgym.kernelbench import Checkout, compare, read_generations, results_from_records, score
from kgym.kernelbench.plan import make_plan
from kgym.records import RecordWriter, load, verify_items
from kgym.verify import Verifier, VerifyConfig

from kb_fake import answer, triton_affine

pytestmark = pytest.mark.slow

GENERATIONS = [
    # model "good": two right answers, one that forgets level 2's clamp (wrong on negative inputs)
    {"level": 1, "problem_id": 1, "model": "good", "answer": answer(triton_affine(3.0, 0.0))},
    {"level": 1, "problem_id": 2, "model": "good", "answer": answer(triton_affine(1.0, 1.5))},
    {"level": 2, "problem_id": 1, "model": "good", "answer": answer(triton_affine(3.0, 0.0))},
    # model "bad": a wrong scale, and two answers with no code block
    {"level": 1, "problem_id": 1, "model": "bad", "answer": answer(triton_affine(2.0, 0.0))},
    {"level": 1, "problem_id": 2, "model": "bad", "answer": "Sorry, I will explain instead."},
    {"level": 2, "problem_id": 1, "model": "bad", "answer": "```python\nclass ModelNew:\n"},
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from kb_fake import make_checkout

    tmp = tmp_path_factory.mktemp("e2e")
    ck = Checkout(make_checkout(tmp / "kb"))
    gen_file = tmp / "gen.jsonl"
    gen_file.write_text("".join(json.dumps(g) + "\n" for g in GENERATIONS))
    plan = make_plan(ck, read_generations(gen_file), verify={"timed_runs": 2})
    assert len(plan.items) == 4 and len(plan.unanswered) == 2
    items = plan.items
    with RecordWriter(str(tmp / "records"), run_id="kb", job_id="eval") as w:
        for row in plan.unanswered:
            w.write(row)
        with Verifier(VerifyConfig(device="cpu", timed_runs=2)) as v:
            verify_items(items, v, writer=w)
    return tmp / "records" / "kb"


def test_scores_from_records(run_dir):
    df = load(run_dir)
    assert len(df) == 6 and set(df["family"]) == {"kernelbench"}
    t = score(results_from_records(df))["models"]
    good, bad = t["good"]["levels"], t["bad"]["levels"]
    assert (good["overall"]["n"], good["overall"]["compiled"], good["overall"]["correct"]) == (3, 3, 2)
    assert (good["1"]["correct"], good["2"]["correct"]) == (2, 0)
    assert (bad["overall"]["n"], bad["overall"]["compiled"], bad["overall"]["correct"]) == (3, 1, 0)
    assert bad["overall"]["eager_fast_1"] == 0
    # On the CPU torch.compile is not measured: nothing can be fast against it.
    assert good["overall"]["compile_fast_1"] == 0
    assert t["good"]["strategy"]["1"]["answers_keeping_pytorch_op"] == 0


def test_cli_score_and_compare(run_dir, capsys, tmp_path):
    assert main(["eval", "score", str(run_dir), "--json", "--out", str(tmp_path / "s.json")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((tmp_path / "s.json").read_text())
    assert printed["models"]["good"]["levels"]["1"]["correct"] == 2
    assert main(["eval", "compare", str(run_dir), str(run_dir), "--model-a", "bad", "--model-b", "good",
                 "--resamples", "5000", "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert (cmp["correct"]["gained"], cmp["correct"]["lost"]) == (2, 0)
    assert cmp["correct"]["delta_pp"] == pytest.approx(200 / 3)
    assert main(["eval", "compare", str(run_dir), str(run_dir)]) == 2  # two models on a side: pick one
    a = [r for r in results_from_records(load(run_dir)) if r.model == "bad"]
    b = [r for r in results_from_records(load(run_dir)) if r.model == "good"]
    assert compare(a, b, resamples=1000)["correct"].figures()["gained"] == 2
