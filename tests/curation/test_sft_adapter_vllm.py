"""The SFT job's adapter serves through vLLM's CPU build (issue 18): `jobs.sft` trains the tiny local
model (random Qwen2, locally trained tokenizer) for a few LoRA steps on CPU, and
`kgym.rollout.engine.VLLMEngine` loads the adapter directory it wrote as a LoRA and generates with
it. The adapter must change what the engine computes: greedy decoding of the same prompt with and
without it gives other tokens or other log-probs (a LoRA whose B matrices vLLM dropped, or an
adapter it failed to load, would give the base's exactly). Whether the SFT'd policy writes good
kernels is the RL learning demonstration's question (docs/rl.md), not this test's."""

from __future__ import annotations

import importlib.util
import os

import pytest

from jobs.sft import SFTJobConfig, run_sft
from kgym.curation.dataset import DatasetRow, write_dataset
from kgym.curation.messages import chat

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("vllm") is None,
                                 reason="vLLM is not installed (pip install -e '.[rollout]')")]

SYSTEM, ANSWER = "You write Triton kernels.", "@triton.jit\ndef k(x_ptr):\n    pass\n"


def test_the_sft_adapter_generates_through_vllm(tmp_path, tiny_dir):
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from transformers import AutoTokenizer

    from kgym.rollout.adapters import PolicyAdapter
    from kgym.rollout.engine import EngineConfig, VLLMEngine
    from kgym.rollout.sampling import SamplingConfig

    rows = [DatasetRow(messages=chat(SYSTEM, f"Write kernel number {i}.", ANSWER), source="kernelbook", family="f",
                       task_id="t", evaluation_id=f"e{i}", answer_mode="triton") for i in range(4)]
    config = SFTJobConfig(dataset=str(write_dataset(rows, tmp_path / "d.parquet")), model=str(tiny_dir),
                          out=str(tmp_path / "sft"), max_steps=3, max_length=256, cpu=True, logging_steps=1,
                          learning_rate=1e-2)
    assert run_sft(config, log=lambda s: None).steps == 3
    adapter_dir = tmp_path / "sft" / "adapter"

    tok = AutoTokenizer.from_pretrained(tiny_dir)
    text = tok.apply_chat_template([{"role": "system", "content": SYSTEM},
                                    {"role": "user", "content": "Write kernel number 1."}],
                                   add_generation_prompt=True, tokenize=False)
    prompt = list(tok(text, add_special_tokens=False)["input_ids"])
    engine = VLLMEngine(EngineConfig(model=str(tiny_dir), max_model_len=1024, max_num_seqs=4, max_loras=2,
                                     enforce_eager=True, seed=0))
    sft = PolicyAdapter(version=1, lora_id=1, path=str(adapter_dir))
    assert engine.load(sft), "vLLM refused the SFT job's adapter directory"
    greedy = SamplingConfig(temperature=0.0, max_tokens=24, seed=0)
    [[base]], [[tuned]] = engine.generate([prompt], greedy, None), engine.generate([prompt], greedy, sft)
    assert tuned.lora_id == 1 and base.lora_id is None
    assert len(tuned.token_ids) == len(tuned.logprobs) > 0
    differs = tuned.token_ids != base.token_ids or any(
        abs(a - b) > 1e-4 for a, b in zip(tuned.logprobs, base.logprobs))
    assert differs, "the adapter changed nothing: vLLM served the base model's output"
