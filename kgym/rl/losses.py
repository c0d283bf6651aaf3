"""Policy losses chosen by name: the registry a job's `[learner] loss = "..."` reads.

    cispo     CISPO (MiniMax-M1), the study's loss: a capped, stop-gradient ratio weight (kgym.rl.cispo)
    grpo      GRPO's clipped surrogate, per-sequence token means (kgym.rl.clipped)
    dapo      DAPO: clip-higher, token-level average
    dr_grpo   Dr. GRPO: clipped surrogate over a constant token count

A loss is a config (frozen dataclass with a `name` and a `beta`) and a function
`(LossInputs, config) -> LossOutput`. `make_loss_config(name, ...)` builds a config from a job's settings,
leaving unset bounds at the loss's own defaults; `policy_loss(inputs, config)` runs the loss the config
names. A new loss is one module and one `register_loss` call here.

Does not cover: the learner that calls it, the advantages (`kgym.rl.advantages`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgym.rl.cispo import BoundMode, CispoConfig, cispo_loss
from kgym.rl.clipped import ClipLossConfig, ClipVariant, clipped_loss
from kgym.rl.loss_io import LossInputs, LossOutput

LossConfig = CispoConfig | ClipLossConfig


@dataclass(frozen=True)
class LossSpec:
    name: str
    doc: str
    # (beta, epsilon_low or None, epsilon_high or None, constant_tokens) -> the loss's config
    make_config: Callable[[float, float | None, float | None, int], Any]
    fn: Callable[[LossInputs, Any], LossOutput]


_LOSSES: dict[str, LossSpec] = {}


def register_loss(spec: LossSpec) -> None:
    if spec.name in _LOSSES:
        raise ValueError(f"a loss named {spec.name!r} is already registered")
    _LOSSES[spec.name] = spec


def loss_names() -> tuple[str, ...]:
    return tuple(_LOSSES)


def loss_spec(name: str) -> LossSpec:
    try:
        return _LOSSES[name]
    except KeyError:
        raise ValueError(f"unknown loss {name!r}: use one of {', '.join(_LOSSES)}") from None


def make_loss_config(name: str, *, beta: float, epsilon_low: float | None = None,
                     epsilon_high: float | None = None, constant_tokens: int = 6144) -> LossConfig:
    """The named loss's config; a bound left None takes that loss's default."""
    return loss_spec(name).make_config(beta, epsilon_low, epsilon_high, constant_tokens)


def policy_loss(inputs: LossInputs, config: LossConfig) -> LossOutput:
    return loss_spec(config.name).fn(inputs, config)


def _cispo_config(beta: float, low: float | None, high: float | None, _tokens: int) -> CispoConfig:
    if low is not None:
        raise ValueError("cispo (bound 'trl', an absolute one-sided cap) takes no epsilon_low; leave it unset")
    return CispoConfig(bound=BoundMode.TRL, beta=beta, **({} if high is None else {"epsilon_high": high}))


def _clip_config(variant: ClipVariant) -> Callable[[float, float | None, float | None, int], ClipLossConfig]:
    def make(beta: float, low: float | None, high: float | None, tokens: int) -> ClipLossConfig:
        return ClipLossConfig.of(variant, beta=beta, epsilon_low=low, epsilon_high=high, constant_tokens=tokens)
    return make


register_loss(LossSpec("cispo", "CISPO: ratio capped at epsilon_high (absolute, default 5.0), stop-gradient "
                                "weight; token-level average", _cispo_config, cispo_loss))
register_loss(LossSpec("grpo", "GRPO: PPO clip 1 -/+ 0.2, each sequence's token mean averaged over sequences",
                       _clip_config(ClipVariant.GRPO), clipped_loss))
register_loss(LossSpec("dapo", "DAPO: clip-higher 1 - 0.2 / 1 + 0.28, token-level average",
                       _clip_config(ClipVariant.DAPO), clipped_loss))
register_loss(LossSpec("dr_grpo", "Dr. GRPO: PPO clip 1 -/+ 0.2, summed over a constant token count x sequences",
                       _clip_config(ClipVariant.DR_GRPO), clipped_loss))
