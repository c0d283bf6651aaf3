"""Per-token log-probs and entropies from logits, and the masked token sums every loss term uses.

Covers: `token_logprobs(logits, targets, temperature)` and `token_logprobs_and_entropy`
(log-softmax in float32, gathered at the targets: bf16 logits lose ~1e-2 in logprob, more than the
drift we want to measure); `token_entropy(logits)`; `masked_sum` / `masked_mean`.

Normalisation (why a global token count): the loss of one optimizer step is
sum over every loss token of the step / (number of loss tokens of the step), the DAPO/TRL-"cispo"
token-level mean. Long answers weigh in proportion to their tokens, and splitting the step into
micro-batches does not change the gradient, because every micro-batch divides by the same global
count and the gradients add up. Tool/observation tokens (loss mask 0) count in neither sum.

Does not cover: running a model (the learner does), which positions of the logits are the
completion's (the caller slices), sampling temperature policy (the caller passes the sampler's).
"""

from __future__ import annotations

import torch


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log softmax(logits / T)[target] per position: logits (..., V), targets (...) -> (...) float32."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, not {temperature}")
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    return logp.gather(-1, targets.long().unsqueeze(-1)).squeeze(-1)


def token_logprobs_and_entropy(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0,
                               entropy_grad: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Both from one float32 log-softmax (the (B, T, V) buffers are the memory peak of a step: make
    one). `entropy_grad=False` computes the entropy outside autograd, so its two (B, T, V)
    intermediates are not kept for a backward that would not use them."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, not {temperature}")
    scaled = logits.float() if temperature == 1.0 else logits.float() / temperature
    logp = torch.log_softmax(scaled, dim=-1)
    chosen = logp.gather(-1, targets.long().unsqueeze(-1)).squeeze(-1)
    if entropy_grad:
        return chosen, -(logp.exp() * logp).sum(-1)
    with torch.no_grad():
        return chosen, -(logp.exp() * logp).sum(-1)


def token_entropy(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Entropy of softmax(logits / T) per position (nats): (..., V) -> (...) float32."""
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    return -(logp.exp() * logp).sum(-1)


def masked_sum(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Sum of x where mask is 1. A select, not a product: a NaN or inf at a masked-out position (a
    tool token's placeholder log-prob, padding) must not reach the sum (inf * 0 is NaN)."""
    return torch.where(mask.bool(), x, torch.zeros((), dtype=x.dtype, device=x.device)).sum()


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of x over mask==1; 0.0 (not NaN) when the mask is empty."""
    return masked_sum(x, mask) / mask.to(x.dtype).sum().clamp(min=1.0)
