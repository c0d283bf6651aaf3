"""The sampler/learner gap and its three corrections (kgym.rl.correction) against values computed by
hand, without a model: the gap statistics, the TIS weights, and the CISPO loss and gradient each
method gives (none: the sampler's log-probs as old; recompute: the learner's; tis: the learner's,
policy term weighted by min(exp(learner - sampler), cap))."""

import math

import pytest
import torch

from kgym.rl import (
    CispoConfig,
    Correction,
    CorrectionConfig,
    GapInputs,
    GapStats,
    LossInputs,
    behaviour,
    cispo_loss,
    sampler_gap,
    tis_weights,
)

# One sample with sampler log-probs (row 0), one without (row 1). Row 0's last token is a tool token.
LEARNER = [[-1.0, -0.5, -2.0, -0.1], [-0.7, -1.3, -0.2, -0.4]]
SAMPLER = [[-1.2, -0.5, -0.5, -3.0], [0.0, 0.0, 0.0, 0.0]]  # row 1: unknown (zeros, as collate leaves them)
MASK = [[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 1.0]]
HAS = [True, False]
ADV = [0.5, -1.0]
CAP = 1.1
N = 6  # loss tokens of the step


def t(x):
    return torch.tensor(x)


def hand_gap():
    d = [LEARNER[0][i] - SAMPLER[0][i] for i in range(3)]  # row 0's loss tokens: 0.2, 0.0, -1.5
    return d, [math.exp(x) for x in d]


def test_gap_statistics_by_hand():
    d, r = hand_gap()
    gap_mask = t(MASK) * t(HAS).float().unsqueeze(1)
    g = sampler_gap(GapInputs(t(LEARNER), t(SAMPLER), gap_mask), CAP)
    assert g.tokens == 3
    assert g.drift == pytest.approx(sum(abs(x) for x in d) / 3, abs=1e-6)
    assert g.kl == pytest.approx(sum(ri - di - 1 for ri, di in zip(r, d)) / 3, abs=1e-6)
    assert g.truncated_fraction == pytest.approx(1 / 3)  # only exp(0.2) = 1.22 passes 1.1
    assert g.weight_mean == pytest.approx((CAP + 1.0 + math.exp(-1.5)) / 3, abs=1e-6)
    both = g + g  # micro-batches add up
    assert both.tokens == 6 and both.drift == pytest.approx(g.drift)
    empty = GapStats()
    assert math.isnan(empty.drift) and math.isnan(empty.kl) and math.isnan(empty.truncated_fraction)


def test_tis_weights_by_hand():
    _, r = hand_gap()
    w = tis_weights(t(LEARNER), t(SAMPLER), t(HAS), CAP)
    assert w[0, :3].tolist() == pytest.approx([min(x, CAP) for x in r], abs=1e-6)
    assert w[1].tolist() == [1.0, 1.0, 1.0, 1.0]  # recomputed by the learner: nothing to correct
    assert not w.requires_grad
    # far off: the log ratio is clamped before exp (finite), then capped
    far = tis_weights(t([[0.0]]), t([[-500.0]]), t([True]), 2.0)
    assert far.item() == 2.0


def loss_and_grad(method):
    cfg = CorrectionConfig(method=method, cap=CAP)
    chosen = behaviour(cfg, t(SAMPLER), t(HAS), t(LEARNER))
    logp = t(LEARNER).clone().requires_grad_(True)  # one optimizer step per batch: pi_theta = the learner's
    out = cispo_loss(LossInputs(logprobs=logp, old_logprobs=chosen.old_logprobs, advantages=t(ADV),
                                 loss_mask=t(MASK), num_tokens=N, is_weights=chosen.is_weights),
                     CispoConfig(beta=0.0))
    out.loss.backward()
    return out, logp.grad


def hand(weight):
    """loss = -sum(w * A * logp) / N over loss tokens; dloss/dlogp = -w * A / N."""
    loss, grad = 0.0, [[0.0] * 4 for _ in range(2)]
    for i in range(2):
        for j in range(4):
            if MASK[i][j]:
                w = weight(i, j)
                loss -= w * ADV[i] * LEARNER[i][j] / N
                grad[i][j] = -w * ADV[i] / N
    return loss, t(grad)


@pytest.mark.parametrize("method, weight", [
    # the sampler's log-probs as old: CISPO's weight is min(pi/pi_sampler, 5) = exp(d) on row 0
    (Correction.NONE, lambda i, j: math.exp(LEARNER[0][j] - SAMPLER[0][j]) if i == 0 else 1.0),
    # the learner's own: ratio 1 everywhere, the gap ignored
    (Correction.RECOMPUTE, lambda i, j: 1.0),
    # the learner's own, times min(exp(d), cap) on row 0
    (Correction.TIS, lambda i, j: min(math.exp(LEARNER[0][j] - SAMPLER[0][j]), CAP) if i == 0 else 1.0),
])
def test_each_correction_gives_the_hand_computed_loss_and_gradient(method, weight):
    out, grad = loss_and_grad(method)
    want_loss, want_grad = hand(weight)
    assert out.loss.item() == pytest.approx(want_loss, abs=1e-6)
    assert torch.allclose(grad, want_grad, atol=1e-6)


def test_behaviour_old_logprobs_per_method():
    s, has, lrn = t(SAMPLER), t(HAS), t(LEARNER)
    none = behaviour(CorrectionConfig(method="none"), s, has, lrn)
    assert torch.equal(none.old_logprobs[0], s[0]) and torch.equal(none.old_logprobs[1], lrn[1])
    assert none.is_weights is None
    assert torch.equal(behaviour(CorrectionConfig(method="none"), s[:1], has[:1], None).old_logprobs, s[:1])
    with pytest.raises(ValueError):
        behaviour(CorrectionConfig(method="none"), s, has, None)  # row 1 has no sampler log-probs
    for method in ("recompute", "tis"):
        with pytest.raises(ValueError):
            behaviour(CorrectionConfig(method=method), s, has, None)
    assert behaviour(CorrectionConfig(method="recompute"), s, has, lrn).is_weights is None


def test_config_defaults_and_refusals():
    cfg = CorrectionConfig()
    assert cfg.method is Correction.TIS and cfg.cap == 2.0  # verl's threshold
    assert CorrectionConfig(method="recompute").method is Correction.RECOMPUTE
    assert not Correction.NONE.recomputes and Correction.TIS.recomputes and Correction.RECOMPUTE.recomputes
    with pytest.raises(ValueError, match="tis"):
        CorrectionConfig(method="vllm")
    for cap in (0.5, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            CorrectionConfig(cap=cap)
