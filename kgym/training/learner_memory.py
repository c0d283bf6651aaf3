"""The learner's peak GPU memory, estimated before it starts: from the model's `config.json` (its
shape) and the `LearnerConfig` (NF4 or not, LoRA rank, the micro-batch's tokens, the log-prob chunk).

    shape = ModelShape.from_dir("/models/qwen2-7b")           # None when config.json is unreadable
    est = estimate_learner_memory(shape, learner_config, longest_sample=16384)
    est.total_gib, est.describe()

Why: colocated on one GPU, the RL job decides whether vLLM must sleep while the learner steps
(`jobs/rl_placement.py`); that needs the learner's peak without building it (the placement is made
before any actor starts). The parts, each as the learner holds it:
- weights: the decoder's linear layers in NF4 (0.5 byte a parameter + one absmax byte per 64, double
  quantisation) or in the compute dtype; embedding, untied lm_head, norms and biases in the compute
  dtype (bitsandbytes leaves them unquantised);
- the LoRA adapter: fp32 weights, their gradients and AdamW's two moments, 16 bytes a parameter;
- activations of one micro-batch (`max(token_budget, longest_sample)` tokens: a sample longer than
  the budget gets a micro-batch of its own, `kgym.rl.packing`): with gradient checkpointing every
  layer's input is kept (hidden x 2 bytes) and one layer is recomputed at a time (its attention
  projections and the MLP's gate, up, product and output); without it every layer's;
- the head: `logits_chunk` rows (all rows when 0) of (tokens x vocabulary) buffers: the head's
  bf16 logits and four float32 ones alive at the worst moment (logits, log-softmax, and their
  gradients in the backward: 18 bytes);
- the CUDA context and cuBLAS workspaces, a fixed `CONTEXT_GIB`, and the caching allocator's slack
  on the dynamic parts (`SLACK`).
Checked against `torch.cuda.max_memory_allocated` of benchmarks/learner_step.py on an H200
(docs/learner.md, 2026-12-01: 4,096-token micro-batches, full logits): 1.5B shape 11.8 GiB measured,
7B shape 16.8 GiB; `tests/rl/test_rl_learner_memory.py` keeps the estimate's allocated part within
10% of both. Does not measure anything or import torch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgym.training.learner_config import LearnerConfig

GIB = 2**30
NF4_BYTES = 0.5 + 1 / 64  # 4 bits + one 8-bit absmax per 64-value block (double quantisation)
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
LORA_BYTES = 16  # fp32 weight + gradient + AdamW's exp_avg and exp_avg_sq
HEAD_BYTES = 18  # per (token x vocab): the head's bf16 logits, then float32 logits, log-softmax and their gradients
CONTEXT_GIB = 0.75  # CUDA context, cuBLAS workspaces: not in max_memory_allocated, in the process's use
SLACK = 1.15  # the caching allocator's reserved over allocated on the parts that come and go each step


@dataclass(frozen=True)
class ModelShape:
    """What the estimate needs of a decoder-only (Qwen2/Llama-style) model's config.json."""

    hidden: int
    layers: int
    intermediate: int
    vocab: int
    heads: int
    kv_heads: int
    head_dim: int
    tied: bool

    @classmethod
    def from_config(cls, c: dict[str, Any]) -> ModelShape:
        heads = int(c["num_attention_heads"])
        hidden = int(c["hidden_size"])
        return cls(hidden=hidden, layers=int(c["num_hidden_layers"]), intermediate=int(c["intermediate_size"]),
                   vocab=int(c["vocab_size"]), heads=heads, kv_heads=int(c.get("num_key_value_heads") or heads),
                   head_dim=int(c.get("head_dim") or hidden // heads), tied=bool(c.get("tie_word_embeddings", False)))

    @classmethod
    def from_dir(cls, model_dir: str | Path) -> ModelShape | None:
        """The shape in `model_dir/config.json`; None when there is none or it lacks a field."""
        try:
            return cls.from_config(json.loads((Path(model_dir) / "config.json").read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def linear_params(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each linear layer of one block, by its name (LORA_TARGETS' names)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        h, i = self.hidden, self.intermediate
        return {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h),
                "gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}


@dataclass(frozen=True)
class LearnerMemory:
    """GiB of each part; `total_gib` is what the learner's process may hold at its peak."""

    weights_gib: float
    lora_gib: float
    activations_gib: float
    head_gib: float
    tokens: int  # tokens of the largest micro-batch the estimate assumed

    @property
    def allocated_gib(self) -> float:
        """The estimate of `torch.cuda.max_memory_allocated` over a step."""
        return self.weights_gib + self.lora_gib + self.activations_gib + self.head_gib

    @property
    def total_gib(self) -> float:
        return self.weights_gib + self.lora_gib + SLACK * (self.activations_gib + self.head_gib) + CONTEXT_GIB

    def describe(self) -> str:
        return (f"learner ~{self.total_gib:.1f} GiB (weights {self.weights_gib:.1f}, LoRA + AdamW "
                f"{self.lora_gib:.2f}, activations {self.activations_gib:.1f} and head {self.head_gib:.1f} for "
                f"{self.tokens} tokens, context and allocator slack)")


def estimate_learner_memory(shape: ModelShape, config: LearnerConfig, longest_sample: int = 0) -> LearnerMemory:
    """The learner's peak for `shape` under `config`; `longest_sample`: the longest episode's tokens
    (the engine's max_model_len), which gets a micro-batch of its own when over the budget."""
    dt = DTYPE_BYTES[config.compute_dtype]
    linears = shape.linear_params()
    linear = shape.layers * sum(a * b for a, b in linears.values())
    embeddings = shape.vocab * shape.hidden * (1 if shape.tied else 2)
    small = shape.layers * (2 * shape.hidden + 2 * shape.kv_heads * shape.head_dim + shape.heads * shape.head_dim)
    weights = linear * (NF4_BYTES if config.quantize_4bit else dt) + (embeddings + small) * dt
    targets = set(config.lora.targets)
    lora_params = shape.layers * sum(config.lora.r * (a + b) for name, (a, b) in linears.items() if name in targets)
    tokens = max(config.token_budget, longest_sample)
    # Per token: the kept input of every layer (checkpointing) plus one layer's recompute (q, k, v,
    # attention output, o_proj's output and residual; gate, up, their product and down's input).
    attn = 3 * shape.hidden + 2 * shape.heads * shape.head_dim + 2 * shape.kv_heads * shape.head_dim
    layer = (attn + 3 * shape.intermediate) * dt
    kept = shape.layers * shape.hidden * dt
    per_token = kept + layer if config.gradient_checkpointing else shape.layers * (shape.hidden * dt + layer)
    head_rows = min(config.logits_chunk, tokens) if config.logits_chunk else tokens
    return LearnerMemory(weights_gib=weights / GIB, lora_gib=lora_params * LORA_BYTES / GIB,
                         activations_gib=tokens * per_token / GIB,
                         head_gib=head_rows * shape.vocab * HEAD_BYTES / GIB, tokens=tokens)


__all__ = ["LearnerMemory", "ModelShape", "estimate_learner_memory"]
