"""The CISPO loss and its gradients against values computed by hand, in both bound modes; k3 KL;
the entropy term; token normalisation across micro-batches."""

import math

import pytest
import torch

from kgym.rl import BoundMode, CispoConfig, LossInputs, cispo_loss, k3_kl

# Two samples, three completion tokens each; the last token of sample 0 is a tool token (mask 0).
LOGP = [[-1.0, -2.0, -0.5], [-2.0, -0.3, -1.0]]
OLD = [[-1.0, -3.0, -0.5], [-1.0, -0.3, -1.0]]  # ratios: [1, e, 1], [1/e, 1, 1]
MASK = [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
ADV = [0.5, -1.0]
E = math.e


def run(config, ref=None, entropy=None, coef=0.0, num_tokens=None, rows=slice(None)):
    logp = torch.tensor(LOGP)[rows].clone().requires_grad_(True)
    out = cispo_loss(LossInputs(logprobs=logp, old_logprobs=torch.tensor(OLD)[rows],
                                 advantages=torch.tensor(ADV)[rows], loss_mask=torch.tensor(MASK)[rows],
                                 ref_logprobs=ref, entropy=entropy, entropy_coef=coef, num_tokens=num_tokens), config)
    out.loss.backward()
    return out, logp.grad


def expected(weights):
    """loss = -sum(w * A * logp * mask) / N, dloss/dlogp = -w * A * mask / N (N = 5 loss tokens)."""
    loss, grad = 0.0, [[0.0] * 3 for _ in range(2)]
    for i in range(2):
        for t in range(3):
            if MASK[i][t]:
                loss -= weights[i][t] * ADV[i] * LOGP[i][t] / 5
                grad[i][t] = -weights[i][t] * ADV[i] / 5
    return loss, torch.tensor(grad)


def test_trl_mode_caps_only_above_and_absolutely():
    cfg = CispoConfig(bound=BoundMode.TRL, epsilon_high=2.0, beta=0.0)
    out, grad = run(cfg)
    w = [[1.0, 2.0, 1.0], [1 / E, 1.0, 1.0]]  # e capped at 2.0; 1/e has no lower bound
    loss, g = expected(w)
    assert out.loss.item() == pytest.approx(loss, abs=1e-6)
    assert torch.allclose(grad, g, atol=1e-7)
    assert out.clip_fraction == pytest.approx(1 / 5)
    assert out.ratio_mean == pytest.approx((1 + E + 1 / E + 1 + 1) / 5, rel=1e-6)
    assert out.tokens == 5 and out.kl == 0.0


def test_verl_mode_clamps_both_sides_relatively():
    cfg = CispoConfig.verl(epsilon_low=0.2, epsilon_high=0.28, beta=0.0)
    out, grad = run(cfg)
    w = [[1.0, 1.28, 1.0], [0.8, 1.0, 1.0]]
    loss, g = expected(w)
    assert out.loss.item() == pytest.approx(loss, abs=1e-6)
    assert torch.allclose(grad, g, atol=1e-7)
    assert out.clip_fraction == pytest.approx(2 / 5)


def test_weight_is_stop_gradient_on_policy_equals_reinforce():
    cfg = CispoConfig(beta=0.0)
    logp = torch.tensor(LOGP, requires_grad=True)
    out = cispo_loss(LossInputs(logprobs=logp, old_logprobs=logp.detach(), advantages=torch.tensor(ADV),
                                 loss_mask=torch.tensor(MASK)), cfg)
    out.loss.backward()
    reinforce = -(torch.tensor(ADV).unsqueeze(1) * torch.tensor(MASK)) / 5
    assert torch.allclose(logp.grad, reinforce)


def test_k3_kl_value_gradient_and_zero_at_equality():
    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    ref = torch.tensor([[-1.5, -2.0]])
    kl = k3_kl(logp, ref)
    d = -0.5
    assert kl[0, 0].item() == pytest.approx(math.exp(d) - d - 1, abs=1e-7)
    assert kl[0, 1].item() == 0.0
    kl.sum().backward()
    assert logp.grad[0, 0].item() == pytest.approx(1 - math.exp(d), abs=1e-7)
    assert logp.grad[0, 1].item() == 0.0


def test_kl_term_is_beta_weighted_token_mean():
    ref = torch.tensor(LOGP) - 0.25
    base, gbase = run(CispoConfig(epsilon_high=2.0, beta=0.0), ref=ref)
    with_kl, gkl = run(CispoConfig(epsilon_high=2.0, beta=0.08), ref=ref)
    k = math.exp(-0.25) + 0.25 - 1
    assert base.kl == pytest.approx(k, rel=1e-5)  # reported even when beta = 0
    assert with_kl.loss.item() - base.loss.item() == pytest.approx(0.08 * k, abs=1e-7)
    assert with_kl.kl_loss == pytest.approx(0.08 * k, abs=1e-7)
    dk = 1 - math.exp(-0.25)  # d k3 / d logp at d = -0.25
    assert torch.allclose(gkl - gbase, 0.08 * dk * torch.tensor(MASK) / 5, atol=1e-7)


def test_entropy_bonus_lowers_loss_by_coef_times_mean_entropy():
    ent = torch.full((2, 3), 2.0, requires_grad=True)
    out, _ = run(CispoConfig(epsilon_high=2.0, beta=0.0), entropy=ent, coef=0.01)
    plain, _ = run(CispoConfig(epsilon_high=2.0, beta=0.0))
    assert out.loss.item() == pytest.approx(plain.loss.item() - 0.01 * 2.0, abs=1e-7)
    assert out.entropy == pytest.approx(2.0)
    assert torch.allclose(ent.grad, -0.01 * torch.tensor(MASK) / 5)


def test_micro_batches_sum_to_the_whole_step():
    cfg = CispoConfig(epsilon_high=2.0, beta=0.0)
    whole, g_whole = run(cfg)
    a, g_a = run(cfg, num_tokens=5, rows=slice(0, 1))
    b, g_b = run(cfg, num_tokens=5, rows=slice(1, 2))
    assert a.loss.item() + b.loss.item() == pytest.approx(whole.loss.item(), abs=1e-7)
    assert torch.allclose(torch.cat([g_a, g_b]), g_whole)


def test_per_token_advantages_broadcast_like_per_sample_ones():
    cfg = CispoConfig(epsilon_high=2.0, beta=0.0)
    logp = torch.tensor(LOGP)
    per_sample = cispo_loss(LossInputs(logp, torch.tensor(OLD), torch.tensor(ADV), torch.tensor(MASK)), cfg)
    per_token = cispo_loss(LossInputs(logp, torch.tensor(OLD), torch.tensor(ADV).unsqueeze(1).expand(2, 3),
                                       torch.tensor(MASK)), cfg)
    assert per_sample.loss.item() == per_token.loss.item()


@pytest.mark.parametrize("kwargs", [
    dict(bound="trl", epsilon_high=0.2),  # TRL's fallback epsilon: caps every on-policy token at 0.2
    dict(bound="trl", epsilon_high=1.0),
    dict(bound="verl", epsilon_high=5.0),  # an absolute cap given to the relative mode
    dict(bound="verl", epsilon_low=1.0, epsilon_high=0.28),
    dict(bound="ppo"),
    dict(beta=-0.1),
])
def test_config_refuses_out_of_bounds(kwargs):
    with pytest.raises(ValueError):
        CispoConfig(**kwargs)


def test_default_is_trl_cap_five_and_study_beta():
    cfg = CispoConfig()
    assert cfg.bound is BoundMode.TRL and cfg.epsilon_high == 5.0 and cfg.beta == 0.08
    assert CispoConfig(bound="verl", epsilon_high=0.28).bound is BoundMode.VERL


def test_missing_reference_with_beta_is_refused():
    with pytest.raises(ValueError, match="ref_logprobs"):
        cispo_loss(LossInputs(torch.tensor(LOGP), torch.tensor(OLD), torch.tensor(ADV), torch.tensor(MASK)),
                   CispoConfig(beta=0.08))


def test_importance_weighted_kl_is_k3_times_ratio_with_its_gradient():
    logp = torch.tensor([[-1.0]], requires_grad=True)
    old, ref = torch.tensor([[-1.5]]), torch.tensor([[-1.25]])
    cfg = CispoConfig(epsilon_high=2.0, beta=0.5, kl_importance_weighted=True)
    out = cispo_loss(LossInputs(logp, old, torch.tensor([0.0]), torch.ones(1, 1), ref_logprobs=ref), cfg)
    d, r = -0.25, math.exp(0.5)
    k3 = math.exp(d) - d - 1
    assert out.loss.item() == pytest.approx(0.5 * k3 * r, abs=1e-7)
    out.loss.backward()
    # d/dlogp [k3(logp) * r(logp)] = (1 - e^d) * r + k3 * r
    assert logp.grad.item() == pytest.approx(0.5 * ((1 - math.exp(d)) * r + k3 * r), abs=1e-6)


def test_masked_out_positions_cannot_poison_the_loss():
    logp = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    old = torch.tensor([[-1.0, -200.0]])  # a junk placeholder on the tool token: exp(198) = inf
    out = cispo_loss(LossInputs(logp, old, torch.tensor([1.0]), torch.tensor([[1.0, 0.0]]),
                                 ref_logprobs=torch.tensor([[-1.0, float("nan")]])), CispoConfig())
    out.loss.backward()
    assert math.isfinite(out.loss.item()) and out.loss.item() == pytest.approx(1.0)
    assert torch.isfinite(logp.grad).all() and logp.grad[0, 1].item() == 0.0
