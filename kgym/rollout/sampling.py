"""Sampling settings of a rollout, with the study's RL and evaluation defaults.

`SamplingConfig` is what one generation call asks of the engine; the engine wrapper turns it into
vLLM's `SamplingParams` (`engine.py`), so this module imports neither vLLM nor torch.

- temperature: RL 1.0, evaluation 0.0 (greedy). RL explores at the policy's own distribution and
  CISPO's ratio needs log-probs of that distribution; the study evaluated greedily.
- top_p: 1.0 in both. A truncated nucleus would make the sampler's log-probs disagree with the
  learner's full softmax.
- max_tokens: RL 6144 (a turn), evaluation 8192 (a benchmark answer): the study's caps.
- group_size: RL 8 answers per prompt (group-relative advantages), evaluation 1.
- thinking: off in both, as the study ran (Qwen3-style templates read `enable_thinking`).
- seed: RL None (fresh samples), evaluation 0 (repeatable; `--samples N` uses seed, seed+1, ...).
Log-probs are always requested for the sampled token only (`logprobs=0`), as the processed
(temperature-scaled) distribution: the engine is built with `logprobs_mode="processed_logprobs"`.
Does not build prompts or call a model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class SamplingConfig:
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 6144  # new tokens per generation (one turn)
    group_size: int = 8  # samples per prompt in `generate_groups`
    seed: int | None = None  # per-request seed; a group's sample k uses seed + k
    thinking: bool = False  # passed to the chat template as enable_thinking
    stop: tuple[str, ...] = ()  # extra stop strings (the template's end-of-turn token is the EOS)
    # Constrain the text to one of these strings (vLLM structured outputs): scripted turns in tests and
    # demos that still go through the engine's real tokens and log-probs. None in RL and evaluation.
    choice: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.temperature < 0 or not 0 < self.top_p <= 1 or self.max_tokens < 1 or self.group_size < 1:
            raise ValueError("need temperature >= 0, 0 < top_p <= 1, max_tokens >= 1, group_size >= 1")

    def replace(self, **changes) -> SamplingConfig:
        return dataclasses.replace(self, **changes)


RL_SAMPLING = SamplingConfig()
EVAL_SAMPLING = SamplingConfig(temperature=0.0, max_tokens=8192, group_size=1, seed=0)
