"""Sampling settings of a rollout, with the study's RL and evaluation defaults.

`SamplingConfig` is what one generation call asks of the engine; the engine wrapper turns it into
vLLM's `SamplingParams` (`engine.py`), so this module imports neither vLLM nor torch. Its settings
are the RL job's `[sampling]`.

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
import json
from dataclasses import dataclass
from pathlib import Path

from kgym.episodes.group import GROUP_SIZE
from kgym.settings import ConfigError, internal, option


@dataclass(frozen=True)
class SamplingConfig:
    """[sampling] of the RL job (its settings); the rest is set by code (evaluation's greedy
    `EVAL_SAMPLING`, the rollout's group size from [episodes])."""

    temperature: float = option(1.0, "the study's; the learner scores its log-probs at the same (vLLM's processed "
                                "log-probs: log softmax(logits / T)); evaluation's greedy 0.0 is EVAL_SAMPLING's",
                                gt=0, le=10)
    max_tokens: int = option(6144, "new tokens per turn (the study's cap)", ge=1)
    thinking: bool = option(False, "enable_thinking for the chat template (the study: off)")
    choice_file: str | None = option(None, "a JSON list of strings; every turn's text is constrained to one of "
                                     "them (vLLM structured outputs): scripted demos and the CPU test, never RL")
    top_p: float = internal(1.0, "1.0: a truncated nucleus would make the sampler's log-probs disagree with the "
                            "learner's full softmax")
    group_size: int = internal(GROUP_SIZE, "samples per prompt (`generate_groups`, episodes' groups): the RL job "
                               "sets [episodes] group_size")
    seed: int | None = internal(None, "per-request seed; a group's sample k uses seed + k")
    stop: tuple[str, ...] = internal((), "extra stop strings (the template's end-of-turn token is the EOS)")
    # Constrain the text to one of these strings (vLLM structured outputs): scripted turns in tests and
    # demos that still go through the engine's real tokens and log-probs. None in RL and evaluation.
    choice: tuple[str, ...] | None = internal(None, "the strings of choice_file (with_choices)")

    def __post_init__(self) -> None:
        if self.temperature < 0 or not 0 < self.top_p <= 1 or self.max_tokens < 1 or self.group_size < 1:
            raise ValueError("need temperature >= 0, 0 < top_p <= 1, max_tokens >= 1, group_size >= 1")

    def replace(self, **changes) -> SamplingConfig:
        return dataclasses.replace(self, **changes)

    def with_choices(self) -> SamplingConfig:
        """`choice` read from `choice_file` (a `ConfigError` naming the file when it is not a JSON list
        of strings); unchanged without one."""
        if self.choice_file is None:
            return self
        try:
            loaded = json.loads(Path(self.choice_file).read_text())
        except (OSError, ValueError) as e:
            raise ConfigError(f"sampling.choice_file {self.choice_file!r}: {e}") from None
        choice = tuple(loaded) if isinstance(loaded, list) else ()
        if not choice or not all(isinstance(c, str) for c in choice):
            raise ConfigError(f"sampling.choice_file {self.choice_file!r}: need a JSON list of strings")
        return self.replace(choice=choice)


RL_SAMPLING = SamplingConfig()
EVAL_SAMPLING = SamplingConfig(temperature=0.0, max_tokens=8192, group_size=1, seed=0)
