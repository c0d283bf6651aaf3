"""The SFT job's adapter serves through vLLM's CPU build, and the toy policy it makes is mixed.

Issue 18's "its adapter generates through vLLM's CPU build", on the RL learning demonstration's toy
set (tests/rljob/toy/toy.py): the tiny model is curated for and trained with the real jobs
(`jobs.curate` with a real CPU Verifier, `jobs.sft` with TRL's SFTTrainer), the adapter is loaded by
`kgym.rollout.engine.VLLMEngine` as a LoRA, and the single-turn RL prompts of the toy tasks (for a
seed the set never held) are sampled at the toy RL job's temperature (0.6, jobs/configs/rl_toy.toml).
The samples must include the task's right answer and its wrong one (so RL has something to choose
between), and the adapter must have changed what the base writes (the base model alone never writes
either answer).
"""

from __future__ import annotations

import collections
import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "rljob" / "toy"))

pytestmark = [pytest.mark.slow,  # ~10 min: jobs.curate, jobs.sft (120 steps), then vLLM
              pytest.mark.skipif(importlib.util.find_spec("vllm") is None,
                                 reason="vLLM is not installed (pip install -e '.[rollout]')")]

SAMPLES = 16  # per task


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    import toy

    return toy.prepare(tmp_path_factory.mktemp("toy"))


def test_sft_set_teaches_both_verified_answers_on_the_rl_prompts(prepared):
    import pyarrow.parquet as pq
    import toy

    from kgym.tasks import make

    rows = pq.read_table(prepared.sft_set).to_pylist()
    assert prepared.curated_rows == 2  # the funnel kept the two right answers and dropped both wrong ones
    assert sorted((r["task_id"], r["task_seed"], r["toy_label"]) for r in rows) == sorted(
        (t, s, label) for t in toy.TASKS for s in toy.SFT_SEEDS for label in ("right", "wrong"))
    known = toy.answers()
    for r in rows:
        user, answer = r["messages"]
        assert user == {"role": "user", "content": make(r["task_id"], r["task_seed"], size="tiny").prompt()}
        assert answer["role"] == "assistant" and known[r["task_id"]][r["toy_label"]] in answer["content"]
        assert r["evaluation_id"]  # the verdict of each, passing or failing, is in the curation's records


def test_sft_adapter_generates_a_mix_of_right_and_wrong_answers_through_vllm(prepared):
    import toy

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from transformers import AutoTokenizer

    from kgym.rollout.adapters import PolicyAdapter
    from kgym.rollout.engine import EngineConfig, VLLMEngine
    from kgym.rollout.sampling import SamplingConfig

    tok = AutoTokenizer.from_pretrained(prepared.base)
    engine = VLLMEngine(EngineConfig(model=str(prepared.base), max_model_len=1536, max_num_seqs=16, max_loras=2,
                                     enforce_eager=True, seed=0))
    sft = PolicyAdapter(version=0, lora_id=1, path=str(prepared.adapter))
    assert engine.load(sft)
    sampling = SamplingConfig(temperature=0.6, max_tokens=384, seed=0)  # rl_toy.toml's
    prompts = [toy.rl_prompt_ids(tok, t, seed=10_001) for t in toy.TASKS]  # a seed the set never held
    tuned = engine.generate(prompts, sampling, sft, n=SAMPLES)
    base = engine.generate(prompts, sampling, None, n=4)
    mix = {t: collections.Counter(toy.classify(t, c.text) for c in outs) for t, outs in zip(toy.TASKS, tuned)}
    print(f"SFT adapter, {SAMPLES} samples per task at T=1: {mix}")
    for t, outs in zip(toy.TASKS, base):
        assert all(toy.classify(t, c.text) == "other" for c in outs)  # the random base writes neither
    for t in toy.TASKS:
        assert mix[t]["right"] >= 1 and mix[t]["wrong"] >= 1, (t, mix[t])
    # the set taught two answers per prompt: together they are most of what the policy writes
    assert sum(mix[t]["right"] + mix[t]["wrong"] for t in toy.TASKS) >= SAMPLES
