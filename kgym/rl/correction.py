"""The sampler/learner gap: measured every step, and corrected by a named method.

The sampler (vLLM, bf16 base, its own kernels) and the learner (NF4 base, training kernels) are
never exactly one policy, so a token's sampler log-prob `s` and the learner's log-prob `l` of it
(the learner's own policy before the update) differ. Per loss token, with `d = l - s`:

    gap (GapStats, measured whatever the method)
      drift        mean |d|                                  nats per token
      kl           mean exp(d) - d - 1                       k3 estimate of KL(sampler || learner):
                                                             the tokens were drawn from the sampler
      truncated    share of tokens with exp(d) > cap         what truncation changes (verl's
                                                             rollout_is_ratio_fraction_high)
      weight_mean  mean min(exp(d), cap)                     the TIS weight's mean

    correction (Correction, `[learner] correction`)
      none       old = s. CISPO's ratio is pi_theta / pi_sampler: the whole gap lands in CISPO's
                 bound (epsilon_high, 5), mixed with the policy lag it is meant for.
      recompute  old = l (the learner's own log-probs, recomputed before the update). The ratio
                 sees only the learner's own lag; the gap is ignored (biased, never high-variance).
      tis        old = l, and the policy term of each token is weighted by the detached truncated
                 importance weight w = min(exp(l - s), cap): the sampler's tokens re-weighted to the
                 learner's policy, with the weight capped so a token the sampler found far likelier
                 cannot dominate. verl's rollout correction (`rollout_is="token"`, threshold 2.0)
                 and TRL 1.16's `vllm_importance_sampling_mode="token_truncate"` (clip_max 3.0)
                 are this; both apply it to the policy term only, not to KL (so does `kgym.rl.cispo`).

`d` is clamped to +-20 before exp (verl's SAFETY_BOUND). Tokens without sampler log-probs (the
learner recomputed them) get weight 1 and count in no gap statistic. The learner's `l` needs one
no-grad forward more per micro-batch for `recompute` and `tis`, unless it is already computed
(samples without sampler log-probs).

`behaviour(method, ...)` turns the method into what the loss takes: the old log-probs of CISPO's
ratio and the TIS weights (`LossInputs.old_logprobs`, `.is_weights`).

Does not cover: the CISPO loss itself (`kgym.rl.cispo`, which takes the weights as
`LossInputs.is_weights`), computing log-probs (`kgym.rl.tokens`), sequence-level or masking variants
(verl's `rollout_rs`, TRL's `*_mask` modes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from kgym.contract.names import Correction  # the names: one StrEnum, in the contract
from kgym.rl.tokens import masked_sum

SAFETY_BOUND = 20.0  # |log ratio| clamp before exp: exp(20) ~ 4.9e8 stays finite in float32


@dataclass(frozen=True)
class CorrectionConfig:
    method: Correction = Correction.TIS
    cap: float = 2.0  # TIS truncation (verl's default 2.0; TRL's 3.0); also the threshold of `truncated`

    def __post_init__(self) -> None:
        if self.method not in tuple(Correction):
            raise ValueError(f"correction must be one of {', '.join(Correction)}, not {self.method!r}")
        object.__setattr__(self, "method", Correction(self.method))
        if not (math.isfinite(self.cap) and self.cap >= 1.0):
            raise ValueError(f"the correction cap must be a finite number >= 1 (a cap below 1 would shrink "
                             f"every on-policy token), not {self.cap}")


@dataclass(frozen=True)
class GapInputs:
    """(B, T) tensors of one micro-batch."""
    learner_logprobs: torch.Tensor  # the learner's policy before this update, no grad
    sampler_logprobs: torch.Tensor  # the sampler's (0 where unknown)
    mask: torch.Tensor  # loss tokens of samples that have sampler log-probs


@dataclass(frozen=True)
class GapStats:
    """Sums over `tokens` loss tokens; add micro-batches with `+`, read the means at the end."""
    tokens: int = 0
    abs_sum: float = 0.0
    k3_sum: float = 0.0
    truncated: int = 0
    weight_sum: float = 0.0

    def __add__(self, other: GapStats) -> GapStats:
        return GapStats(self.tokens + other.tokens, self.abs_sum + other.abs_sum, self.k3_sum + other.k3_sum,
                        self.truncated + other.truncated, self.weight_sum + other.weight_sum)

    def _mean(self, total: float) -> float:
        return total / self.tokens if self.tokens else float("nan")

    @property
    def drift(self) -> float:
        return self._mean(self.abs_sum)

    @property
    def kl(self) -> float:
        return self._mean(self.k3_sum)

    @property
    def truncated_fraction(self) -> float:
        return self._mean(float(self.truncated))

    @property
    def weight_mean(self) -> float:
        return self._mean(self.weight_sum)


def _log_ratio(learner: torch.Tensor, sampler: torch.Tensor) -> torch.Tensor:
    return (learner.detach().float() - sampler.float()).clamp(-SAFETY_BOUND, SAFETY_BOUND)


def sampler_gap(inputs: GapInputs, cap: float) -> GapStats:
    mask = inputs.mask.bool()
    n = int(mask.sum())
    if n == 0:
        return GapStats()
    d = _log_ratio(inputs.learner_logprobs, inputs.sampler_logprobs)
    r = torch.exp(d)
    return GapStats(tokens=n, abs_sum=float(masked_sum(d.abs(), mask)), k3_sum=float(masked_sum(r - d - 1.0, mask)),
                    truncated=int(masked_sum((r > cap).float(), mask)),
                    weight_sum=float(masked_sum(r.clamp(max=cap), mask)))


def tis_weights(learner_logprobs: torch.Tensor, sampler_logprobs: torch.Tensor, has_sampler: torch.Tensor,
                cap: float) -> torch.Tensor:
    """(B, T) detached weights min(exp(learner - sampler), cap); 1 for samples without sampler
    log-probs (`has_sampler` (B,) False). Values at non-loss positions are never used (mask them)."""
    w = torch.exp(_log_ratio(learner_logprobs, sampler_logprobs)).clamp(max=cap)
    return torch.where(has_sampler.bool().unsqueeze(1), w, torch.ones_like(w)).detach()


@dataclass(frozen=True)
class Behaviour:
    """What the loss takes from the correction, (B, T) each."""
    old_logprobs: torch.Tensor  # the denominator of CISPO's ratio
    is_weights: torch.Tensor | None  # TIS weights (tis), None otherwise


def behaviour(config: CorrectionConfig, sampler_logprobs: torch.Tensor, has_sampler: torch.Tensor,
              learner_logprobs: torch.Tensor | None) -> Behaviour:
    """`learner_logprobs`: the learner's own log-probs before the update, needed for every sample
    with recompute and tis, and with none for the samples without sampler log-probs (None: there
    are none such)."""
    has = has_sampler.bool().unsqueeze(1)
    if config.method is Correction.NONE:
        if learner_logprobs is None:
            if not bool(has.all()):
                raise ValueError("samples without sampler log-probs need the learner's")
            return Behaviour(sampler_logprobs, None)
        return Behaviour(torch.where(has, sampler_logprobs, learner_logprobs), None)
    if learner_logprobs is None:
        raise ValueError(f"correction {config.method} needs the learner's own log-probs")
    if config.method is Correction.RECOMPUTE:
        return Behaviour(learner_logprobs, None)
    return Behaviour(learner_logprobs, tis_weights(learner_logprobs, sampler_logprobs, has_sampler, config.cap))
