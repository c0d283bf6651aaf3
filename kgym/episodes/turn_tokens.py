"""`TurnSample`: the tokens of one assistant turn as the sampler produced them, for the learner.

A policy that samples with a tokenizer (vLLM, a local model) passes one with each action:
`await env.step(message, sample=TurnSample(prompt_ids, completion_ids, logprobs, policy_version=v))`.
- `prompt_ids`: every token the model was conditioned on for this turn (chat template rendered:
  the opening messages and, in later turns, all earlier turns and their tool results);
- `completion_ids`: the tokens it generated this turn;
- `logprobs`: the sampler's log-prob of each generated token (vLLM `logprobs=0` with
  `processed_logprobs`), or None when it gave none (the learner then recomputes them);
- `loss_mask`: per completion token, 1 for a token the model sampled, 0 for one the sampler
  inserted (a forced stop string, a template token); all ones when not given;
- `policy_version`: the adapter version that sampled the turn.
Scripted policies pass none: an episode without tokens still runs, is scored and recorded, and
gives no learner sample. Does not tokenize or flatten turns into a sample (`flatten.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TurnSample:
    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    logprobs: tuple[float, ...] | None = None
    loss_mask: tuple[int, ...] | None = None  # None: every completion token is the model's
    policy_version: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "prompt_ids", tuple(int(x) for x in self.prompt_ids))
        object.__setattr__(self, "completion_ids", tuple(int(x) for x in self.completion_ids))
        n = len(self.completion_ids)
        mask = (1,) * n if self.loss_mask is None else tuple(int(m) for m in self.loss_mask)
        object.__setattr__(self, "loss_mask", mask)
        if not self.prompt_ids:
            raise ValueError("a turn needs at least one prompt token")
        if len(mask) != n or any(m not in (0, 1) for m in mask):
            raise ValueError(f"loss_mask needs one 0/1 entry per completion token ({n})")
        if self.logprobs is not None:
            lps = tuple(float(x) for x in self.logprobs)
            object.__setattr__(self, "logprobs", lps)
            if len(lps) != n:
                raise ValueError(f"logprobs has {len(lps)} entries for {n} completion tokens")
            if any(not math.isfinite(v) or v > 0 for v, m in zip(lps, mask) if m):
                raise ValueError("logprobs must be finite and <= 0 on the model's tokens")
        if self.policy_version < 0:
            raise ValueError("policy_version must be >= 0")

    @property
    def mask(self) -> tuple[int, ...]:
        """The loss mask, never None (filled in at construction)."""
        assert self.loss_mask is not None
        return self.loss_mask

    @property
    def stream(self) -> tuple[int, ...]:
        """prompt + completion: the token stream the next turn's prompt must extend."""
        return self.prompt_ids + self.completion_ids
