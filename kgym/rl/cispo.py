"""The CISPO loss of MiniMax-M1 (arXiv 2506.13585): token-level REINFORCE weighted by a clipped,
stop-gradient importance ratio, plus k3 KL to a reference and an optional entropy bonus.

Per loss token t of sample i, with r = exp(logp - old_logp):

    w     = sg(bound(r))                                  (a number: no gradient flows through it)
    l_t   = -rho_t * w * A_{i,t} * logp_t + beta * k3(logp_t, ref_logp_t) - c_H * H_t
    loss  = sum_t mask_t * l_t / N                        (N = loss tokens of the whole step)

`rho_t` is the sampler/learner correction weight (`LossInputs.is_weights`, detached; 1 when None):
`kgym.rl.correction`'s truncated importance weight, on the policy term only (as TRL and verl).
Gradient: -rho * w * A * grad(logp), so unlike PPO's clip no token's gradient is ever dropped; the bound
only caps how much an off-policy token can weigh. Fully on-policy (r = 1) CISPO is REINFORCE: the
bound matters only under sampler/learner mismatch or policy lag.

Two bound modes, named after the codebases that define them:
  - `BoundMode.TRL` (default): w = min(r, epsilon_high), an ABSOLUTE one-sided cap, as TRL 1.16
    `loss_type="cispo"`. MiniMax-M1 put no lower bound on the weight and tuned only the upper one;
    this is that. `epsilon_high` must exceed 1 (ScaleRL used ~5; the default is 5.0): TRL's own
    fallback to epsilon=0.2 caps every on-policy token at 0.2 and silently shrinks the gradient
    five-fold, so a cap <= 1 is refused here.
  - `BoundMode.VERL`: w = clamp(r, 1 - epsilon_low, 1 + epsilon_high), RELATIVE two-sided bounds,
    as verl's cispo policy loss. Here epsilon_high is a distance from 1 and must be <= 1 (a value
    above 1 is almost surely an absolute TRL-style cap given to the wrong mode).
KL: plain k3 per token by default. TRL 1.16 defaults to `use_bias_correction_kl=True`, k3 * r with
r differentiated (the tokens come from pi_old, the KL is of pi_theta); `kl_importance_weighted=True`
is that. On-policy r = 1, so the two agree in value, not in gradient once k3 > 0.
Where the definitions coincide (TRL mode, token-level ratios, loss tokens counted over the step,
no entropy bonus, the same KL weighting), the loss equals TRL's to float precision
(tests/rl/test_rl_trl_parity.py, both KL weightings).

`clip_fraction` counts loss tokens whose weight the bound changed, whatever the advantage's sign
(TRL's `cispo_clip_ratio` counts only A > 0 ones; both signs matter for CISPO's gradient).

The KL and entropy terms, the token normalisation and the metrics are shared with the other losses
(`kgym.rl.loss_io`); a job picks its loss by name (`kgym.rl.losses`).

Does not cover: computing log-probs (`kgym.rl.tokens`), the entropy coefficient's schedule
(`kgym.rl.entropy`), advantage shaping (`kgym.rl.repo`), sequence-level ratios (GSPO).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

import torch

from kgym.rl.loss_io import LossInputs, LossOutput, Normalise, finish, normaliser, prepare


class BoundMode(StrEnum):
    TRL = "trl"  # w = min(r, epsilon_high): absolute, one-sided
    VERL = "verl"  # w = clamp(r, 1 - epsilon_low, 1 + epsilon_high): relative, two-sided


@dataclass(frozen=True)
class CispoConfig:
    name: ClassVar[str] = "cispo"  # its key in kgym.rl.losses
    bound: BoundMode = BoundMode.TRL
    epsilon_high: float = 5.0  # TRL mode: the absolute cap on r; VERL mode: the distance above 1
    epsilon_low: float = 0.2  # VERL mode only: the distance below 1
    beta: float = 0.08  # k3 KL weight (the study's beta)
    kl_importance_weighted: bool = False  # k3 * r (r differentiated), TRL 1.16's default use_bias_correction_kl

    def __post_init__(self) -> None:
        if self.bound not in tuple(BoundMode):
            raise ValueError(f"bound must be one of {', '.join(BoundMode)}, not {self.bound!r}")
        object.__setattr__(self, "bound", BoundMode(self.bound))
        if self.bound is BoundMode.TRL and not self.epsilon_high > 1.0:
            raise ValueError(f"bound 'trl' caps the ratio at epsilon_high in absolute terms; it must be > 1 "
                             f"(ScaleRL ~5), not {self.epsilon_high}")
        if self.bound is BoundMode.VERL:
            if not 0.0 < self.epsilon_low < 1.0:
                raise ValueError(f"bound 'verl' needs 0 < epsilon_low < 1, not {self.epsilon_low}")
            if not 0.0 < self.epsilon_high <= 1.0:
                raise ValueError(f"bound 'verl' takes epsilon_high as a distance above 1 (0 < eps <= 1), "
                                 f"not {self.epsilon_high}; an absolute cap is bound 'trl'")
        if not 0.0 <= self.beta <= 10.0:
            raise ValueError(f"beta must be in [0, 10], not {self.beta}")

    @classmethod
    def verl(cls, epsilon_low: float = 0.2, epsilon_high: float = 0.28, beta: float = 0.08) -> CispoConfig:
        return cls(bound=BoundMode.VERL, epsilon_low=epsilon_low, epsilon_high=epsilon_high, beta=beta)

    def bound_ratio(self, ratio: torch.Tensor) -> torch.Tensor:
        if self.bound is BoundMode.TRL:
            return ratio.clamp(max=self.epsilon_high)
        return ratio.clamp(1.0 - self.epsilon_low, 1.0 + self.epsilon_high)


def cispo_loss(inputs: LossInputs, config: CispoConfig = CispoConfig()) -> LossOutput:
    p = prepare(inputs)
    ratio = torch.exp(p.logp.detach() - inputs.old_logprobs)
    weight = config.bound_ratio(ratio)  # computed from detached logp: the stop-gradient of CISPO
    weight_term = weight if p.is_weights is None else weight * p.is_weights
    return finish(inputs, p, -weight_term * p.advantages * p.logp, norm=normaliser(inputs, p, Normalise.TOKEN),
                  beta=config.beta, kl_importance_weighted=config.kl_importance_weighted,
                  changed=weight != ratio, ratio=ratio)
