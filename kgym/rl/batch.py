"""The learner's input: a plain, versioned batch of token-level samples (no tensors, no Ray objects).

One `Sample` is one answer to one prompt:
  - `prompt_ids`: the tokens the policy was conditioned on (chat template rendered, system + user);
  - `completion_ids`: every token after the prompt, model and tool tokens alike, in order;
  - `loss_mask`: per completion token, 1 for a token the model sampled, 0 for one it did not
    (tool results, observations, template tokens the environment inserted);
  - `sampler_logprobs`: per completion token, the sampler's log-prob of that token (vLLM
    `logprobs=0`, `processed_logprobs` so temperature is in it), or None when the sampler gave none:
    the learner then recomputes them. Values at loss-mask-0 positions are ignored (use 0.0);
  - `reward` or `advantage`: the scalar score of the whole answer; the learner turns rewards into
    group-relative advantages over samples sharing `group_id` (all samples of a batch give rewards,
    or all give advantages: a mix is refused);
  - `policy_version`: the adapter version that sampled it (for staleness accounting);
  - `episode_id`: set when one episode gives several samples (one per turn, when its turns cannot be
    concatenated): the group's advantages are then computed over episodes, each episode's reward
    counted once, and every sample of an episode gets its episode's advantage. None: the sample is
    an episode of its own.

A multi-turn repair episode flattens into ONE sample (`flatten_turns`): the first turn's prompt is
`prompt_ids`; then each assistant turn's tokens (loss mask 1, its sampler logprobs) and each
tool/observation turn's tokens (loss mask 0) are concatenated in order into `completion_ids`. The
completion is then exactly the token stream the model saw, so the learner's forward reproduces the
sampler's context at every model token. (This assumes each turn's prompt extends the previous
turn's token stream, which holds when the episode re-renders nothing; an episode that re-renders
its history must give the tokens as the last turn saw them.)

Does not cover: tensors and padding (`kgym.rl.packing`), computing rewards (`kgym.reward`), the
episode records themselves (`kgym.episodes`, which this module deliberately does not import).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Sample:
    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    loss_mask: tuple[int, ...]
    group_id: str
    reward: float | None = None
    advantage: float | None = None
    sampler_logprobs: tuple[float, ...] | None = None
    policy_version: int = 0
    episode_id: str | None = None  # samples of one episode (per-turn fallback) share it; None: its own

    def __post_init__(self) -> None:
        for name in ("prompt_ids", "completion_ids", "loss_mask"):
            object.__setattr__(self, name, tuple(int(x) for x in getattr(self, name)))
        if self.sampler_logprobs is not None:
            object.__setattr__(self, "sampler_logprobs", tuple(float(x) for x in self.sampler_logprobs))
        if not self.prompt_ids:
            raise ValueError("a sample needs at least one prompt token")
        if len(self.loss_mask) != len(self.completion_ids):
            raise ValueError(f"loss_mask has {len(self.loss_mask)} entries for {len(self.completion_ids)} tokens")
        if any(m not in (0, 1) for m in self.loss_mask):
            raise ValueError("loss_mask entries must be 0 or 1")
        if self.sampler_logprobs is not None:
            if len(self.sampler_logprobs) != len(self.completion_ids):
                raise ValueError("sampler_logprobs must have one entry per completion token")
            if any(not math.isfinite(v) or v > 0 for v, m in zip(self.sampler_logprobs, self.loss_mask) if m):
                raise ValueError("sampler_logprobs must be finite and <= 0 on loss tokens")
        if (self.reward is None) == (self.advantage is None):
            raise ValueError("give exactly one of reward and advantage")
        if self.policy_version < 0:
            raise ValueError("policy_version must be >= 0")

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)

    @property
    def loss_tokens(self) -> int:
        return sum(self.loss_mask)


@dataclass(frozen=True)
class Turn:
    """One turn of an episode after the first prompt: a model turn (sampled, `logprobs` per token or
    None) or an environment turn (tool result, observation; never trained on)."""
    token_ids: tuple[int, ...]
    from_model: bool
    logprobs: tuple[float, ...] | None = None


def flatten_turns(prompt_ids: Sequence[int], turns: Sequence[Turn], group_id: str, *, reward: float | None = None,
                  advantage: float | None = None, policy_version: int = 0) -> Sample:
    """A multi-turn episode as one Sample (see the module docstring). Sampler logprobs survive only
    when every model turn has them; one missing turn makes the learner recompute the whole sample."""
    ids: list[int] = []
    mask: list[int] = []
    lps: list[float] | None = []
    for turn in turns:
        ids.extend(turn.token_ids)
        mask.extend([1 if turn.from_model else 0] * len(turn.token_ids))
        if lps is None:
            continue
        if not turn.from_model:
            lps.extend([0.0] * len(turn.token_ids))
        elif turn.logprobs is None or len(turn.logprobs) != len(turn.token_ids):
            lps = None
        else:
            lps.extend(turn.logprobs)
    return Sample(prompt_ids=tuple(prompt_ids), completion_ids=tuple(ids), loss_mask=tuple(mask), group_id=group_id,
                  reward=reward, advantage=advantage, sampler_logprobs=None if lps is None else tuple(lps),
                  policy_version=policy_version)


@dataclass(frozen=True)
class TrainBatch:
    """The samples of one optimizer step (the study: one task, 8 answers, per step)."""
    samples: tuple[Sample, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "samples", tuple(self.samples))
        if not self.samples:
            raise ValueError("an empty batch")
        kinds = {s.reward is None for s in self.samples}
        if len(kinds) != 1:
            raise ValueError("a batch gives rewards for all samples or advantages for all, not a mix")

    @property
    def has_rewards(self) -> bool:
        return self.samples[0].reward is not None

    @property
    def loss_tokens(self) -> int:
        return sum(s.loss_tokens for s in self.samples)

    @property
    def tokens(self) -> int:
        return sum(s.length for s in self.samples)

    def episode_keys(self) -> list[str]:
        """Per sample, the episode it belongs to: its `episode_id`, or its own index when it has none."""
        return [s.episode_id if s.episode_id is not None else f"#sample-{i}" for i, s in enumerate(self.samples)]

    @property
    def episodes(self) -> int:
        """The episodes of the batch (samples sharing an `episode_id` are one)."""
        return len(set(self.episode_keys()))

    def episode_loss_tokens(self) -> list[int]:
        """Per sample, the loss tokens of its whole episode: what a per-sequence normalisation (GRPO's,
        Dr. GRPO's) must count, so that an episode split into one sample per turn weighs as one
        sequence, as its advantage already does (red team, 2026-12-07)."""
        keys = self.episode_keys()
        total: dict[str, int] = {}
        for k, s in zip(keys, self.samples):
            total[k] = total.get(k, 0) + s.loss_tokens
        return [total[k] for k in keys]
