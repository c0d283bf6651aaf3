"""The learner's memory estimate (kgym.training.learner_memory), which decides whether a colocated
engine must sleep while the learner steps: against the peaks benchmarks/learner_step.py measured on
an H200 (docs/learner.md, 2026-12-01: NF4, LoRA r 8, 4,096-token micro-batches, full logits), and
how it moves with the settings that change the learner's memory. No model, no torch."""

from __future__ import annotations

import json

import pytest

from kgym.training.learner_config import LearnerConfig
from kgym.training.learner_memory import ModelShape, estimate_learner_memory

QWEN_15B = dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True)
QWEN_7B = dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
               num_key_value_heads=4, vocab_size=152064, tie_word_embeddings=False)
MEASURED = LearnerConfig(token_budget=4096, logits_chunk=0)  # the benchmark's settings of the time


@pytest.mark.parametrize("config, peak_gib, lora_millions", [(QWEN_15B, 11.8, 9.2), (QWEN_7B, 16.8, 20.2)])
def test_estimate_is_within_ten_percent_of_the_measured_peak(config, peak_gib, lora_millions):
    est = estimate_learner_memory(ModelShape.from_config(config), MEASURED)
    assert abs(est.allocated_gib - peak_gib) / peak_gib < 0.10, est.describe()
    assert est.lora_gib * 2**30 / 16 / 1e6 == pytest.approx(lora_millions, abs=0.05)  # the measured LoRA size
    assert est.total_gib > est.allocated_gib  # context and allocator slack on top


def test_chunked_logits_and_the_longest_sample_move_the_estimate():
    shape = ModelShape.from_config(QWEN_7B)
    default = estimate_learner_memory(shape, LearnerConfig(), longest_sample=16384)
    full = estimate_learner_memory(shape, LearnerConfig(logits_chunk=0), longest_sample=16384)
    assert default.tokens == 16384 and 10 < default.total_gib < 20, default.describe()
    assert full.head_gib > 15 * default.head_gib  # 16K rows of the head's buffers instead of 1K
    # a sample longer than the budget gets a micro-batch of its own: the estimate follows it
    small = estimate_learner_memory(shape, LearnerConfig(token_budget=2048), longest_sample=0)
    longest = estimate_learner_memory(shape, LearnerConfig(token_budget=2048), longest_sample=8192)
    assert longest.activations_gib == pytest.approx(4 * small.activations_gib)
    bf16 = estimate_learner_memory(shape, LearnerConfig(quantize_4bit=False), longest_sample=16384)
    assert bf16.weights_gib > 2.5 * default.weights_gib
    eager = estimate_learner_memory(shape, LearnerConfig(gradient_checkpointing=False), longest_sample=16384)
    assert eager.activations_gib > 5 * default.activations_gib


def test_shape_from_a_model_directory(tmp_path):
    assert ModelShape.from_dir(tmp_path) is None  # no config.json
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 64}))
    assert ModelShape.from_dir(tmp_path) is None  # fields missing
    (tmp_path / "config.json").write_text(json.dumps(QWEN_7B))
    shape = ModelShape.from_dir(tmp_path)
    assert shape is not None and (shape.head_dim, shape.kv_heads, shape.tied) == (128, 4, False)
