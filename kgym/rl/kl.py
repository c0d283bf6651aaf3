"""The k3 estimator of KL(pi_theta || pi_ref) per token, from the two log-probs of the sampled token.

    d = log pi_ref(y) - log pi_theta(y)
    k3 = exp(d) - d - 1        (>= 0, zero where the two agree, unbiased for KL under y ~ pi_theta)

This is Schulman's "k3" and the form TRL and verl ("low_var_kl") use. Its gradient flows through
`logprobs` only; `ref_logprobs` must come from a no-grad forward of the reference policy.
`d` is clamped to +-`clamp` before exp so a token the reference finds far likelier cannot overflow
(verl clamps k3 itself at 10; the clamp here only matters past exp(20)).

Does not cover: which model is the reference (the learner decides: the SFT adapter after SFT,
the base with the adapter off otherwise), the beta weighting or the token normalisation (`cispo`).
"""

from __future__ import annotations

import torch


def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor, clamp: float = 20.0) -> torch.Tensor:
    """Per-token k3 KL, same shape as the inputs (mask it yourself)."""
    if logprobs.shape != ref_logprobs.shape:
        raise ValueError(f"shape mismatch: {tuple(logprobs.shape)} vs {tuple(ref_logprobs.shape)}")
    d = (ref_logprobs - logprobs).clamp(-clamp, clamp)
    return torch.exp(d) - d - 1.0
