"""An adaptive entropy bonus: a controller that moves the bonus coefficient c_H once per optimizer step.

    observed H < target  ->  c_H = min(c_H + delta, coef_max)      (entropy is collapsing: push back)
    observed H >= target ->  c_H = max(c_H - delta, coef_min)      (enough exploration: back off)

The coefficient applied to a step is the one set after the previous step, and it is 0 while the last
observed entropy is above the target (`gate_above_target`, as TRL's adaptive entropy bonus does), so
the bonus can only hold entropy up, never drive it past the target. The loss term is
-c_H * mean token entropy over the step's loss tokens (`kgym.rl.cispo`).

`target=None` calibrates the target to the first observed entropy: the pre-RL policy's entropy is
the level worth keeping (DESIGN: "set the target near the observed early entropy"); a fixed number
means little across models and temperatures. Defaults follow TRL's (delta 0.005, start 0), except
`coef_max` 0.1 instead of 1.0: a bonus of 1 nat-weight per token outweighs the policy term.

The state (coefficient, target, last entropy) round-trips through `state_dict` for checkpoints.

Does not cover: computing entropies (`kgym.rl.tokens`), advantage shaping (`kgym.rl.repo`),
clip-higher or Clip-Cov style controls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class EntropyBonusConfig:
    adaptive: bool = True  # False: a fixed bonus of `coef` every step (0.0: no bonus)
    coef: float = 0.0  # the starting (or fixed) coefficient
    target: float | None = None  # nats per token; None: the first observed entropy
    delta: float = 0.005
    coef_min: float = 0.0
    coef_max: float = 0.1
    gate_above_target: bool = True

    def __post_init__(self) -> None:
        if not 0.0 <= self.coef_min <= self.coef_max <= 1.0:
            raise ValueError(f"need 0 <= coef_min <= coef_max <= 1, not {self.coef_min}, {self.coef_max}")
        if not self.coef_min <= self.coef <= self.coef_max:
            raise ValueError(f"coef {self.coef} outside [{self.coef_min}, {self.coef_max}]")
        if self.delta < 0 or (self.adaptive and self.delta == 0):
            raise ValueError(f"delta must be > 0 when adaptive (>= 0 otherwise), not {self.delta}")
        if self.target is not None and not (math.isfinite(self.target) and self.target >= 0):
            raise ValueError(f"target must be a non-negative number of nats, not {self.target}")


class EntropyController:
    """Holds c_H between steps. `coef_for_step()` before a step, `update(mean_entropy)` after it."""

    def __init__(self, config: EntropyBonusConfig = EntropyBonusConfig()) -> None:
        self.config = config
        self.coef = config.coef
        self.target = config.target
        self.last_entropy: float | None = None

    def coef_for_step(self) -> float:
        c = self.config
        if not c.adaptive:
            return self.coef
        if c.gate_above_target and self.last_entropy is not None and self.target is not None \
                and self.last_entropy > self.target:
            return 0.0
        return self.coef

    def update(self, mean_entropy: float) -> float:
        """Record the step's mean token entropy; returns the coefficient for the next step."""
        c = self.config
        if not math.isfinite(mean_entropy):
            return self.coef  # no loss tokens this step: nothing to steer by, leave the state alone
        self.last_entropy = mean_entropy
        if not c.adaptive:
            return self.coef
        if self.target is None:
            self.target = mean_entropy
        if mean_entropy < self.target:
            self.coef = min(self.coef + c.delta, c.coef_max)
        else:
            self.coef = max(self.coef - c.delta, c.coef_min)
        return self.coef

    def state_dict(self) -> dict:
        return {"coef": self.coef, "target": self.target, "last_entropy": self.last_entropy}

    def load_state_dict(self, state: dict) -> None:
        self.coef, self.target, self.last_entropy = state["coef"], state["target"], state["last_entropy"]
