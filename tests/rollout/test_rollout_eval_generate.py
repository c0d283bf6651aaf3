"""KernelBench answers from the tiny model through vLLM (`kgym.rollout.generate`, behind `kgym eval
generate`): the JSONL that `kgym eval run` reads, and on to a score table. The fake checkout always;
the shared KernelBench checkout (two level-1 problems) where it and its dependencies are present."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from rollout_helpers import requires_vllm

from kgym.kernelbench import Checkout, read_generations, results_from_records, score
from kgym.kernelbench.plan import make_plan
from kgym.records import RecordWriter, load
from kgym.rollout.generate import default_sampling, generate_answers

from paths import shared_kernelbench

pytestmark = [requires_vllm, pytest.mark.slow]
SHARED_KB = shared_kernelbench()
sys.path.insert(0, str(Path(__file__).parents[1] / "kernelbench"))
# KernelBench's utils import litellm, which otherwise fetches a price list from the network at import
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def test_defaults_follow_the_protocol():
    s = default_sampling(1)
    assert (s.temperature, s.max_tokens, s.thinking, s.seed) == (0.0, 8192, False, 0)
    assert default_sampling(4).temperature == 1.0 and default_sampling(4, temperature=0.7).temperature == 0.7


def test_fake_checkout_to_a_score_table(engine, tmp_path):
    from kb_fake import make_checkout

    ck = Checkout(make_checkout(tmp_path / "kb"))
    out = tmp_path / "gen.jsonl"
    summary = generate_answers(engine, ck, [1, 2], out, model_name="tiny",
                               sampling=default_sampling(1, max_tokens=24))
    assert summary.rows == 3 and summary.tokens > 0
    gens = read_generations(out)
    assert sorted(g.key for g in gens) == [(1, 1), (1, 2), (2, 1)] and {g.model for g in gens} == {"tiny"}
    # greedy: the same file twice
    again = generate_answers(engine, ck, [1, 2], tmp_path / "again.jsonl", model_name="tiny",
                             sampling=default_sampling(1, max_tokens=24))
    assert again.rows == 3 and out.read_text() == (tmp_path / "again.jsonl").read_text()
    # the random model writes no code: every answer is recorded as failing compile, none reaches a verifier
    plan = make_plan(ck, gens)
    assert plan.items == [] and len(plan.unanswered) == 3
    with RecordWriter(str(tmp_path / "records"), run_id="tiny", job_id="eval") as w:
        for row in plan.unanswered:
            w.write(row)
    table = score(results_from_records(load(tmp_path / "records" / "tiny")))
    overall = table["models"]["tiny"]["levels"]["overall"]
    assert (overall["n"], overall["compiled"], overall["eager_fast_1"]) == (3, 0, 0)


def test_multi_sample_rows_are_seeded(engine, tmp_path):
    from kb_fake import make_checkout

    ck = Checkout(make_checkout(tmp_path / "kb"))
    out = tmp_path / "gen.jsonl"
    generate_answers(engine, ck, [1], out, model_name="tiny", sampling=default_sampling(3, max_tokens=16, seed=5),
                     samples=3, ids=[1])
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["sample"], r["seed"]) for r in rows] == [(0, 5), (1, 6), (2, 7)]
    assert len({r["answer"] for r in rows}) > 1


@pytest.mark.skipif(not (SHARED_KB / "KernelBench" / "level1").is_dir(), reason="no shared KernelBench checkout")
@pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                    reason="KernelBench's prompt constructor imports litellm (pip install -e the checkout)")
def test_two_problems_of_the_real_checkout(engine, tmp_path):
    out = tmp_path / "gen.jsonl"
    summary = generate_answers(engine, Checkout(SHARED_KB), [1], out, model_name="tiny", ids=[19, 23],
                               sampling=default_sampling(1, max_tokens=32))
    gens = read_generations(out)
    assert summary.rows == 2 and sorted(g.problem_id for g in gens) == [19, 23]
    assert len(make_plan(Checkout(SHARED_KB), gens).unanswered) == 2
