"""Log-probs (and entropies) of chosen tokens from hidden states, a chunk of rows at a time, so that no
(tokens x vocabulary) float32 tensor of a whole long episode ever exists.

Why: the unchunked path makes the head's logits for every completion position and then float32
copies of them (the cast, the log-softmax, exp for the entropy, the product): at 16K tokens and a
152K vocabulary each copy is 9.3 GiB, ~45 GB in all beside the weights. Here the head runs on `chunk`
rows at a time; under autograd each chunk is a `torch.utils.checkpoint` region, so its logits and
log-softmax are freed after the forward and recomputed, one chunk at a time, in the backward. Peak
memory for this part is a few (chunk x V) float32 buffers, whatever the episode's length; the cost is
the head's matmul run twice (once more in the backward), ~2 * chunk * H * V FLOPs a chunk.

    chunked_logprobs(hidden (N, H), head, targets (N,), temperature, chunk) -> (logp (N,), entropy (N,))

Each row is independent (one position's distribution), so the result equals the unchunked
`token_logprobs_and_entropy(head(hidden), targets, temperature)` row for row; only the matmul's
summation order may differ with the GEMM's shape (float noise, tested on CPU within 1e-6).

Does not cover: running the decoder or picking which rows are completion tokens (the learner,
`kgym.training.learner_model`), the loss.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.utils.checkpoint import checkpoint

from kgym.rl.tokens import token_logprobs_and_entropy


def chunked_logprobs(hidden: torch.Tensor, head: Callable[[torch.Tensor], torch.Tensor], targets: torch.Tensor,
                     temperature: float = 1.0, chunk: int = 1024,
                     entropy_grad: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """float32 (N,) log softmax(head(h) / T)[target] and entropies, `chunk` rows at a time.
    `entropy_grad=False`: the entropies carry no gradient (a metric, not a bonus)."""
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, not {chunk}")
    if hidden.dim() != 2 or targets.shape != hidden.shape[:1]:
        raise ValueError(f"need hidden (N, H) and targets (N,), not {tuple(hidden.shape)} and {tuple(targets.shape)}")
    if hidden.shape[0] == 0:
        empty = hidden.new_zeros((0,), dtype=torch.float32)
        return empty, empty

    def piece(h: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return token_logprobs_and_entropy(head(h), t, temperature, entropy_grad)

    params = getattr(head, "parameters", None)
    head_grad = params is not None and any(p.requires_grad for p in params())
    recompute = torch.is_grad_enabled() and (hidden.requires_grad or head_grad)
    logps, ents = [], []
    for start in range(0, hidden.shape[0], chunk):
        h, t = hidden[start:start + chunk], targets[start:start + chunk]
        if recompute:
            lp, ent = checkpoint(piece, h, t, use_reentrant=False)
        else:
            lp, ent = piece(h, t)
        logps.append(lp)
        ents.append(ent)
    return torch.cat(logps), torch.cat(ents)
