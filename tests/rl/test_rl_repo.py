"""REPO-style log-prob advantage shaping: A' = A - zeta (logp - mean logp) on loss tokens."""

import pytest
import torch

from kgym.rl import LogProbShapingConfig, shape_advantages


def test_formula_and_mask():
    adv = torch.tensor([1.0, -1.0])
    logp = torch.tensor([[-0.1, -3.0], [-1.0, -9.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    out = shape_advantages(adv, logp, mask, zeta=0.5)
    centre = (-0.1 - 3.0 - 1.0) / 3
    want = torch.tensor([[1 - 0.5 * (-0.1 - centre), 1 - 0.5 * (-3.0 - centre)],
                         [-1 - 0.5 * (-1.0 - centre), 0.0]])
    assert torch.allclose(out, want)


def test_zero_zeta_is_identity_and_shaping_decorrelates():
    torch.manual_seed(0)
    logp = -torch.rand(64, 16) * 5
    mask = torch.ones(64, 16)
    # a "calibrated" policy: answers with likelier tokens got the higher advantages
    adv = logp.mean(1) - logp.mean()
    plain = shape_advantages(adv, logp, mask, zeta=0.0)
    assert torch.allclose(plain, adv.unsqueeze(1).expand(64, 16))
    shaped = shape_advantages(adv, logp, mask, zeta=0.5)

    def cov(a):
        return float(((a - a.mean()) * (logp - logp.mean())).mean())
    assert cov(shaped) < cov(plain)


def test_zeta_bounds():
    assert not LogProbShapingConfig().enabled
    with pytest.raises(ValueError):
        LogProbShapingConfig(zeta=1.5)
