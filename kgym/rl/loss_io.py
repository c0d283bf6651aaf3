"""What every policy loss takes and returns, and the parts they share: the normalisation of a step's
per-token terms, the k3 KL and entropy terms, and the metrics.

A loss (`kgym.rl.cispo`, `kgym.rl.clipped`) computes its per-token policy term l_t; `finish` adds

    loss = sum_t mask_t * (l_t + beta * k3_t - c_H * H_t) * w_t

where the normalisation weights w_t say how the step's tokens are averaged (`Normalise`):
  - TOKEN     w = 1 / N, N the loss tokens of the whole step (DAPO, CISPO, TRL's default)
  - SEQUENCE  w = 1 / (|o_i| * S), each sequence's token mean averaged over the step's S sequences (GRPO)
  - CONSTANT  w = 1 / (L * S), L a fixed token count (Dr. GRPO: no length bias)
A sequence is an episode: the learner passes S = the step's episodes and |o_i| = the loss tokens of
row i's whole episode (`sequence_tokens`), so an episode flattened into one sample per turn is one
sequence, not one per turn (before 2026-12-07 its k turns weighed k sequences).
Micro-batches of one step give the same N and S (`num_tokens`, `num_sequences`), so their losses are
shares that add up to the step's loss.

Does not cover: the per-token policy terms (each loss's own module), which loss a job uses
(`kgym.rl.losses`), computing log-probs (`kgym.rl.tokens`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import torch

from kgym.rl.kl import k3_kl
from kgym.rl.tokens import masked_mean, masked_sum


class Normalise(StrEnum):
    TOKEN = "token"
    SEQUENCE = "sequence"
    CONSTANT = "constant"


@dataclass(frozen=True)
class LossInputs:
    """One micro-batch of completion tokens, all (B, T) unless said otherwise."""
    logprobs: torch.Tensor  # current policy, with grad
    old_logprobs: torch.Tensor  # behaviour policy (sampler's, or recomputed), no grad
    advantages: torch.Tensor  # (B,) per sample or (B, T) per token (shaped)
    loss_mask: torch.Tensor  # 1 on model tokens, 0 on tool/observation tokens and padding
    ref_logprobs: torch.Tensor | None = None  # reference policy, no grad; needed when beta > 0
    entropy: torch.Tensor | None = None  # per-token entropy of the current policy (with grad for a bonus)
    num_tokens: float | None = None  # loss tokens of the whole step (TOKEN); None: this batch's
    entropy_coef: float = 0.0  # the bonus coefficient for this step (kgym.rl.entropy)
    is_weights: torch.Tensor | None = None  # (B, T) detached sampler/learner correction (kgym.rl.correction)
    num_sequences: float | None = None  # sequences of the whole step (SEQUENCE, CONSTANT); None: this batch's
    # (B,) loss tokens of the sequence each row belongs to (SEQUENCE): an episode given as one sample per
    # turn is one sequence of all its turns' tokens (`TrainBatch.episode_loss_tokens`); None: the row's own
    sequence_tokens: torch.Tensor | None = None


@dataclass(frozen=True)
class LossOutput:
    """`loss` is this micro-batch's share of the step loss (backward it; shares add up to the step's).
    The `*_loss` floats are the same shares per term; the rest are means over this batch's loss
    tokens, to be averaged over micro-batches weighted by `tokens`."""
    loss: torch.Tensor
    policy_loss: float
    kl_loss: float
    entropy_loss: float
    kl: float  # mean k3 per loss token (0.0 when no reference was given)
    entropy: float  # mean entropy per loss token (nan when none was given)
    clip_fraction: float  # loss tokens whose weight or gradient the loss's bound changed
    ratio_mean: float
    tokens: int


@dataclass(frozen=True)
class Prepared:
    """The checked, broadcast tensors of a micro-batch."""
    logp: torch.Tensor
    mask: torch.Tensor  # in logp's dtype
    advantages: torch.Tensor  # (B, 1) or (B, T)
    tokens: int
    is_weights: torch.Tensor | None  # detached, in logp's dtype


def prepare(inputs: LossInputs) -> Prepared:
    logp, mask = inputs.logprobs, inputs.loss_mask.to(inputs.logprobs.dtype)
    if inputs.old_logprobs.shape != logp.shape or mask.shape != logp.shape:
        raise ValueError("logprobs, old_logprobs and loss_mask must have one shape")
    adv = inputs.advantages.to(logp.dtype)
    if adv.dim() == 1:
        adv = adv.unsqueeze(1)  # one advantage per sample, broadcast over its tokens
    w = None
    if inputs.is_weights is not None:
        if inputs.is_weights.shape != logp.shape:
            raise ValueError("is_weights must have the shape of logprobs")
        w = inputs.is_weights.detach().to(logp.dtype)
    return Prepared(logp, mask, adv, int(mask.sum().item()), w)


def normaliser(inputs: LossInputs, p: Prepared, mode: Normalise, constant_tokens: int = 0) -> float | torch.Tensor:
    """A number to divide the summed terms by (TOKEN), or per-token weights (B, T) to multiply them by."""
    if mode is Normalise.TOKEN:
        n = float(inputs.num_tokens) if inputs.num_tokens is not None else float(max(p.tokens, 1))
        if n <= 0:
            raise ValueError(f"num_tokens must be > 0, not {n}")
        return n
    s = float(inputs.num_sequences) if inputs.num_sequences is not None else float(p.logp.shape[0])
    if s <= 0:
        raise ValueError(f"num_sequences must be > 0, not {s}")
    if mode is Normalise.CONSTANT:
        if constant_tokens <= 0:
            raise ValueError(f"the constant normaliser needs constant_tokens > 0, not {constant_tokens}")
        return float(constant_tokens) * s
    if inputs.sequence_tokens is not None:
        if inputs.sequence_tokens.shape != p.logp.shape[:1]:
            raise ValueError("sequence_tokens needs one entry per row")
        lengths = inputs.sequence_tokens.to(p.logp.dtype).unsqueeze(1).clamp(min=1.0)
    else:
        lengths = p.mask.sum(dim=1, keepdim=True).clamp(min=1.0)  # a sequence with no loss token adds nothing
    return (1.0 / (lengths * s)).expand_as(p.logp)


def _reduce(x: torch.Tensor, mask: torch.Tensor, norm: float | torch.Tensor) -> torch.Tensor:
    if isinstance(norm, torch.Tensor):
        return masked_sum(x * norm, mask)
    return masked_sum(x, mask) / norm


def finish(inputs: LossInputs, p: Prepared, policy_per_token: torch.Tensor, *, norm: float | torch.Tensor,
           beta: float, kl_importance_weighted: bool, changed: torch.Tensor, ratio: torch.Tensor) -> LossOutput:
    """Add the KL and entropy terms to a loss's per-token policy term, normalise, and measure.
    `changed`: where the loss's bound changed a token's weight or gradient; `ratio`: exp(logp - old), detached."""
    logp, mask = p.logp, p.mask
    kl_term = logp.new_zeros(())
    kl_mean = 0.0
    if beta != 0.0:
        if inputs.ref_logprobs is None:
            raise ValueError("beta > 0 needs ref_logprobs")
        per_token_kl = k3_kl(logp, inputs.ref_logprobs)
        if kl_importance_weighted:
            # the tokens were drawn from pi_old, the KL is of pi_theta: weight by r, with its gradient
            per_token_kl = per_token_kl * torch.exp(logp - inputs.old_logprobs)
        kl_term = beta * _reduce(per_token_kl, mask, norm)
        kl_mean = masked_mean(per_token_kl.detach(), mask).item()
    elif inputs.ref_logprobs is not None:
        kl_mean = masked_mean(k3_kl(logp.detach(), inputs.ref_logprobs), mask).item()

    ent_term = logp.new_zeros(())
    ent_mean = float("nan")
    if inputs.entropy is not None:
        ent_term = -inputs.entropy_coef * _reduce(inputs.entropy, mask, norm)
        ent_mean = masked_mean(inputs.entropy.detach(), mask).item()
    elif inputs.entropy_coef != 0.0:
        raise ValueError("entropy_coef != 0 needs entropy")

    policy_term = _reduce(policy_per_token, mask, norm)
    loss = policy_term + kl_term + ent_term
    return LossOutput(loss=loss, policy_loss=policy_term.detach().item(), kl_loss=kl_term.detach().item(),
                      entropy_loss=ent_term.detach().item(), kl=kl_mean, entropy=ent_mean,
                      clip_fraction=masked_mean(changed.to(mask.dtype), mask).item(),
                      ratio_mean=masked_mean(ratio, mask).item(), tokens=p.tokens)
