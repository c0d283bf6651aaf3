"""Micro-batches by token budget, and the padded tensors of one micro-batch.

Layout (as TRL's): prompts left-padded to the longest prompt P, completions right-padded to the
longest completion C, so every completion starts at column P and `logits_to_keep = C + 1` covers it.
Position ids count real tokens only (cumsum of the attention mask), so a left-padded sample sees the
positions vLLM gave it unpadded; without them, RoPE positions shift by the padding.

Budget: a micro-batch of n samples costs n * (P + C) padded tokens; samples are taken longest
first and a micro-batch is closed when the next would pass `token_budget`. A sample longer than the
budget gets a micro-batch of its own (it cannot be split: its tokens attend to each other).
What a micro-batch holds is then linear in its padded tokens: the learner computes the head's
logits `logits_chunk` rows at a time (`kgym.rl.chunked`), so the vocabulary-sized float32 buffers
are bounded by the chunk, not by the longest episode (before issue 28 they were (C x V) per copy,
~45 GB for a 16K-token episode at a 152K vocabulary). A lone over-budget episode exceeds the budget
only by its own activations (with gradient checkpointing, one hidden state per layer per token).

Does not cover: the sample format (`kgym.rl.batch`), running the model (the learner).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from kgym.rl.batch import Sample


def plan_micro_batches(samples: Sequence[Sample], token_budget: int) -> list[list[int]]:
    """Indices of `samples` per micro-batch; deterministic (ties keep input order)."""
    if token_budget <= 0:
        raise ValueError(f"token_budget must be > 0, not {token_budget}")
    order = sorted(range(len(samples)), key=lambda i: (-samples[i].length, i))
    plans: list[list[int]] = []
    current: list[int] = []
    max_p = max_c = 0
    for i in order:
        p, c = len(samples[i].prompt_ids), len(samples[i].completion_ids)
        new_p, new_c = max(max_p, p), max(max_c, c)
        if current and (len(current) + 1) * (new_p + new_c) > token_budget:
            plans.append(current)
            current, new_p, new_c = [], p, c
        current.append(i)
        max_p, max_c = new_p, new_c
    if current:
        plans.append(current)
    return plans


@dataclass(frozen=True)
class PaddedBatch:
    input_ids: torch.Tensor  # (B, P + C) long
    attention_mask: torch.Tensor  # (B, P + C) long
    position_ids: torch.Tensor  # (B, P + C) long
    completion_ids: torch.Tensor  # (B, C) long
    loss_mask: torch.Tensor  # (B, C) float: 1 on model tokens, 0 on tool tokens and padding
    sampler_logprobs: torch.Tensor  # (B, C) float, 0 where unknown
    has_sampler_logprobs: torch.Tensor  # (B,) bool
    prompt_width: int  # P
    completion_width: int  # C

    def to(self, device: torch.device | str) -> PaddedBatch:
        moved = {k: (v.to(device) if isinstance(v, torch.Tensor) else v) for k, v in self.__dict__.items()}
        return PaddedBatch(**moved)


def collate(samples: Sequence[Sample], pad_id: int) -> PaddedBatch:
    b = len(samples)
    p = max(len(s.prompt_ids) for s in samples)
    c = max(max(len(s.completion_ids) for s in samples), 1)
    input_ids = torch.full((b, p + c), pad_id, dtype=torch.long)
    attn = torch.zeros((b, p + c), dtype=torch.long)
    comp = torch.full((b, c), pad_id, dtype=torch.long)
    mask = torch.zeros((b, c), dtype=torch.float32)
    lps = torch.zeros((b, c), dtype=torch.float32)
    has = torch.zeros((b,), dtype=torch.bool)
    for i, s in enumerate(samples):
        lp, lc = len(s.prompt_ids), len(s.completion_ids)
        input_ids[i, p - lp:p] = torch.tensor(s.prompt_ids)
        attn[i, p - lp:p + lc] = 1
        if lc:
            input_ids[i, p:p + lc] = torch.tensor(s.completion_ids)
            comp[i, :lc] = torch.tensor(s.completion_ids)
            mask[i, :lc] = torch.tensor(s.loss_mask, dtype=torch.float32)
        if s.sampler_logprobs is not None:
            has[i] = True
            if lc:
                lps[i, :lc] = torch.tensor(s.sampler_logprobs, dtype=torch.float32)
    position_ids = (attn.cumsum(-1) - 1).clamp(min=0)
    return PaddedBatch(input_ids=input_ids, attention_mask=attn, position_ids=position_ids, completion_ids=comp,
                       loss_mask=mask, sampler_logprobs=lps, has_sampler_logprobs=has, prompt_width=p,
                       completion_width=c)
