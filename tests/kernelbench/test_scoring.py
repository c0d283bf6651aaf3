"""fast_p tables against hand-computed counts; flags, unflagged variants, hybrid split, multi-sample."""

from __future__ import annotations

import pytest

from kgym.kernelbench import KernelBenchError, ProblemResult, multi_sample, score
from kgym.kernelbench.scoring import METRIC_KEYS

R = ProblemResult


def _level1(model="m"):
    # id: compiled, correct, eager x, compile x, keeps a torch op
    return [
        R(model, 1, 1, True, True, 0.8, 0.5),                     # correct, slower than both
        R(model, 1, 2, True, True, 1.2, 0.9, keeps_torch_op=True),  # eager fast_1 only, hybrid
        R(model, 1, 3, True, True, 1.6, 1.0),                     # eager fast_1.5; compile exactly 1.0: not > 1
        R(model, 1, 4, True, True, 2.5, 2.1),                     # fast_2 on both
        R(model, 1, 5, True, True, 12.0, 3.0),                    # flagged (eager > 10)
        R(model, 1, 6, True, False),                              # compiled, wrong
        R(model, 1, 7, False, False, gate="compile"),             # did not compile
        R(model, 1, 8, True, True, None, None),                   # correct, timing missing
    ]


def _level2(model="m"):
    return [
        R(model, 2, 1, True, True, 1.1, 11.0, keeps_torch_op=True),  # flagged on compile only
        R(model, 2, 2, True, True, 2.0, 1.5, keeps_torch_op=True),   # eager 2.0 is not > 2
        R(model, 2, 3, False, False, keeps_torch_op=True),
    ]


def test_level_table_by_hand():
    t = score(_level1() + _level2())["models"]["m"]["levels"]
    assert list(t) == ["overall", "1", "2"]
    assert t["1"] == {"n": 8, "compiled": 7, "correct": 6,
                      "eager_fast_1": 4, "eager_fast_1.5": 3, "eager_fast_2": 2,
                      "compile_fast_1": 2, "compile_fast_1.5": 2, "compile_fast_2": 2,
                      "flags": 1, "eager_fast_1_unflagged": 3, "compile_fast_1_unflagged": 1}
    assert t["2"] == {"n": 3, "compiled": 2, "correct": 2,
                      "eager_fast_1": 2, "eager_fast_1.5": 1, "eager_fast_2": 0,
                      "compile_fast_1": 2, "compile_fast_1.5": 1, "compile_fast_2": 1,
                      "flags": 1, "eager_fast_1_unflagged": 1, "compile_fast_1_unflagged": 1}
    assert t["overall"] == {k: t["1"][k] + t["2"][k] for k in METRIC_KEYS}
    assert tuple(t["1"]) == METRIC_KEYS


def test_keys_match_figures_json():
    import json
    from pathlib import Path

    figures = Path("/work/shared/seeds/figures.json")
    if not figures.exists():
        pytest.skip("the study's figures.json is not on this machine")
    levels = json.loads(figures.read_text())["models"]["base"]["levels"]
    assert set(levels["1"]) == set(METRIC_KEYS)
    strategy = json.loads(figures.read_text())["level2_strategy"]["base"]["2"]
    assert set(strategy) == set(score(_level2())["models"]["m"]["strategy"]["2"])


def test_hybrid_split_per_level():
    s = score(_level1() + _level2())["models"]["m"]["strategy"]
    assert s["1"] == {"answers_keeping_pytorch_op": 1, "fast_unflagged_hybrid": 1, "fast_unflagged_pure_triton": 2}
    assert s["2"] == {"answers_keeping_pytorch_op": 3, "fast_unflagged_hybrid": 1, "fast_unflagged_pure_triton": 0}


def test_models_are_scored_apart_and_duplicates_refused():
    t = score(_level1("a") + _level2("b"))["models"]
    assert sorted(t) == ["a", "b"] and t["b"]["levels"]["overall"]["n"] == 3
    dup = _level1() + [R("m", 1, 1, True, False, sample=1)]
    with pytest.raises(KernelBenchError, match="several answers"):
        score(dup)
    assert score(dup, sample=1)["models"]["m"]["levels"]["1"]["n"] == 1


def test_multi_sample_mean_and_spread():
    # three passes over two problems: correct counts 2, 1, 0 -> mean 1, sample std 1
    rs = []
    for s, solved in enumerate([(True, True), (True, False), (False, False)]):
        rs += [R("m", 1, i + 1, True, ok, 1.5 if ok else None, 0.5 if ok else None, sample=s)
               for i, ok in enumerate(solved)]
    t = multi_sample(rs)["models"]["m"]
    assert t["samples"] == 3
    c = t["levels"]["1"]["correct"]
    assert c["values"] == [2, 1, 0] and c["mean"] == 1.0 and c["std"] == pytest.approx(1.0)
    assert t["levels"]["1"]["compile_fast_1"]["mean"] == 0.0
    assert t["levels"]["overall"]["n"] == {"mean": 2.0, "std": 0.0, "min": 2.0, "max": 2.0, "values": [2, 2, 2]}
