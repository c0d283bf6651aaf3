"""The PPO-clip family of policy losses: GRPO, DAPO and Dr. GRPO. They share the clipped surrogate
and differ in their bounds and in how a step's tokens are averaged.

Per loss token t of sample i, with r = exp(logp - old_logp) (r carries the gradient):

    l_t = -rho_t * min(r * A, clamp(r, 1 - epsilon_low, 1 + epsilon_high) * A)

`rho_t` is the sampler/learner correction weight (`LossInputs.is_weights`, detached; 1 when None).
Where the clamped branch is the smaller, the token's gradient is zero (PPO's clip): unlike CISPO, a
token that moved past the bound stops learning. `clip_fraction` counts those tokens.

  - GRPO (DeepSeekMath, arXiv 2402.03300): epsilon 0.2 both sides, each sequence's token mean, averaged
    over the step's sequences (`Normalise.SEQUENCE`): a long answer's tokens weigh less each.
  - DAPO (arXiv 2503.14476): clip-higher, epsilon_low 0.2 and epsilon_high 0.28, averaged over every loss
    token of the step (`Normalise.TOKEN`). The paper drops the KL term: set beta 0 for that.
  - Dr. GRPO (arXiv 2503.20783): epsilon 0.2, summed and divided by a constant token count x the
    step's sequences (`Normalise.CONSTANT`), so neither length nor group size biases a token's weight.
    The paper also drops the std in the advantage (`kgym.rl.advantages.AdvantageConfig`).
The KL (k3, weight beta) and entropy terms share the loss's normalisation (`kgym.rl.loss_io`).

Does not cover: CISPO (`kgym.rl.cispo`), the advantages themselves, dual-clip PPO, sequence-level
ratios (GSPO).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

import torch

from kgym.rl.loss_io import LossInputs, LossOutput, Normalise, finish, normaliser, prepare


class ClipVariant(StrEnum):
    GRPO = "grpo"
    DAPO = "dapo"
    DR_GRPO = "dr_grpo"


NORMALISE = {ClipVariant.GRPO: Normalise.SEQUENCE, ClipVariant.DAPO: Normalise.TOKEN,
             ClipVariant.DR_GRPO: Normalise.CONSTANT}
DEFAULT_EPSILONS = {ClipVariant.GRPO: (0.2, 0.2), ClipVariant.DAPO: (0.2, 0.28), ClipVariant.DR_GRPO: (0.2, 0.2)}


@dataclass(frozen=True)
class ClipLossConfig:
    variant: ClipVariant = ClipVariant.GRPO
    epsilon_low: float = 0.2  # r is clamped below at 1 - epsilon_low
    epsilon_high: float = 0.2  # and above at 1 + epsilon_high
    beta: float = 0.08  # k3 KL weight (the study's)
    kl_importance_weighted: bool = False  # k3 * r (r differentiated), as in kgym.rl.cispo
    constant_tokens: int = 6144  # Dr. GRPO's per-sequence token count (the generation budget of a turn)

    def __post_init__(self) -> None:
        if self.variant not in tuple(ClipVariant):
            raise ValueError(f"variant must be one of {', '.join(ClipVariant)}, not {self.variant!r}")
        object.__setattr__(self, "variant", ClipVariant(self.variant))
        if not 0.0 < self.epsilon_low < 1.0:
            raise ValueError(f"epsilon_low must be in (0, 1), not {self.epsilon_low}")
        if not 0.0 < self.epsilon_high <= 10.0:
            raise ValueError(f"epsilon_high is a distance above 1 in (0, 10], not {self.epsilon_high}")
        if not 0.0 <= self.beta <= 10.0:
            raise ValueError(f"beta must be in [0, 10], not {self.beta}")
        if self.constant_tokens < 1:
            raise ValueError(f"constant_tokens must be >= 1, not {self.constant_tokens}")

    @property
    def name(self) -> str:  # its key in kgym.rl.losses
        return self.variant.value

    @property
    def normalise(self) -> Normalise:
        return NORMALISE[self.variant]

    @classmethod
    def of(cls, variant: ClipVariant | str, **overrides: object) -> ClipLossConfig:
        """The variant with its paper's bounds, then `overrides` (None values keep the defaults)."""
        v = ClipVariant(variant)
        low, high = DEFAULT_EPSILONS[v]
        base = cls(variant=v, epsilon_low=low, epsilon_high=high)
        return replace(base, **{k: x for k, x in overrides.items() if x is not None})


def clipped_loss(inputs: LossInputs, config: ClipLossConfig) -> LossOutput:
    p = prepare(inputs)
    ratio = torch.exp(p.logp - inputs.old_logprobs)
    unclipped = ratio * p.advantages
    clipped = ratio.clamp(1.0 - config.epsilon_low, 1.0 + config.epsilon_high) * p.advantages
    surrogate = torch.minimum(unclipped, clipped)
    if p.is_weights is not None:
        surrogate = surrogate * p.is_weights
    dropped = (clipped < unclipped).expand_as(p.logp)  # the clamped branch won: no gradient from this token
    return finish(inputs, p, -surrogate, norm=normaliser(inputs, p, config.normalise, config.constant_tokens),
                  beta=config.beta, kl_importance_weighted=config.kl_importance_weighted,
                  changed=dropped.detach(), ratio=ratio.detach())
