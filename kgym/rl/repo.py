"""Log-probability advantage shaping in the style of REPO (Petrenko et al., "Entropy-preserving
reinforcement learning", arXiv 2603.11682).

The paper's observation: under a policy-gradient step the change of entropy is driven by the
covariance between a token's advantage and its log-probability; when likely tokens also get the high
advantages (a calibrated model), each step sharpens the distribution and entropy collapses. REPO
modifies the advantage to break that correlation. What this module does, per loss token:

    A'_{i,t} = A_i - zeta * (logp_{i,t} - mean(logp over the step's loss tokens))

with logp the current policy's (detached, so it only re-weights). Tokens likelier than average lose
some advantage and unlikely ones gain some; zeta = 0 is plain GRPO advantages.

This is "log-prob advantage shaping, REPO-style", kgym's reading of the paper's idea; it is not the
study's "REPO-R", whose formula is not public, nor the paper's adaptive controller for zeta (a
caller may drive zeta from `kgym.rl.entropy`'s controller). Does not cover: the entropy bonus
(`kgym.rl.entropy`), ADAPO's asymmetric clipping.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kgym.rl.tokens import masked_mean


@dataclass(frozen=True)
class LogProbShapingConfig:
    zeta: float = 0.0  # 0 disables shaping (the default: the study's exact variant is unknown)

    def __post_init__(self) -> None:
        if not 0.0 <= self.zeta <= 1.0:
            raise ValueError(f"zeta must be in [0, 1], not {self.zeta}")

    @property
    def enabled(self) -> bool:
        return self.zeta > 0.0


def shape_advantages(advantages: torch.Tensor, logprobs: torch.Tensor, loss_mask: torch.Tensor,
                     zeta: float, mean_logprob: float | None = None) -> torch.Tensor:
    """(B,) or (B, T) advantages -> (B, T) shaped ones. `mean_logprob` is the step-wide mean over loss
    tokens (pass it when the step spans several micro-batches); None: this batch's mean."""
    adv = advantages.unsqueeze(1) if advantages.dim() == 1 else advantages
    lp = logprobs.detach().float()
    centre = masked_mean(lp, loss_mask).item() if mean_logprob is None else mean_logprob
    shaped = adv.float() - zeta * (lp - centre)
    return shaped * loss_mask.to(shaped.dtype)
