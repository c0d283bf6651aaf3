"""Losses chosen by name (kgym.rl.losses): GRPO, DAPO and Dr. GRPO against values computed by hand
(the clipped surrogate, its zero gradient past the bound, each normalisation), micro-batch shares that
add up to the step's loss, the KL and correction terms under each normalisation, the registry, the
job's [learner] loss key, and one learner step per loss on the tiny model. CISPO's own hand and TRL
checks are in test_rl_cispo.py and test_rl_trl_parity.py."""

import math

import pytest
import torch

from kgym.rl import (
    CispoConfig,
    ClipLossConfig,
    ClipVariant,
    LossInputs,
    k3_kl,
    loss_names,
    make_loss_config,
    policy_loss,
)
from kgym.rl.loss_io import Normalise

# The samples of test_rl_cispo: ratios [1, e, 1], [1/e, 1, 1]; sample 0's last token is a tool token.
LOGP = [[-1.0, -2.0, -0.5], [-2.0, -0.3, -1.0]]
OLD = [[-1.0, -3.0, -0.5], [-1.0, -0.3, -1.0]]
MASK = [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
ADV = [0.5, -1.0]
E = math.e


def run(config, rows=slice(None), ref=None, is_weights=None, num_tokens=None, num_sequences=None):
    logp = torch.tensor(LOGP)[rows].clone().requires_grad_(True)
    out = policy_loss(LossInputs(logprobs=logp, old_logprobs=torch.tensor(OLD)[rows],
                                 advantages=torch.tensor(ADV)[rows], loss_mask=torch.tensor(MASK)[rows],
                                 ref_logprobs=ref, is_weights=is_weights, num_tokens=num_tokens,
                                 num_sequences=num_sequences), config)
    out.loss.backward()
    return out, logp.grad


# Surrogates min(r A, clamp(r) A) by hand. Sample 0 (A = 0.5): r = 1 -> 0.5 (gradient r A = 0.5);
# r = e -> clamped 1.2 * 0.5 = 0.6 (DAPO: 1.28 * 0.5 = 0.64), no gradient. Sample 1 (A = -1):
# r = 1/e -> clamped 0.8 * -1 = -0.8 < -1/e, no gradient; r = 1 -> -1 twice (gradient -1).
def test_grpo_averages_each_sequence_then_the_sequences_and_drops_clipped_gradients():
    out, grad = run(make_loss_config("grpo", beta=0.0))
    assert out.loss.item() == pytest.approx(-((0.5 + 0.6) / 2 + (-0.8 - 1 - 1) / 3) / 2, abs=1e-6)
    want = torch.tensor([[-0.5 / (2 * 2), 0.0, 0.0], [0.0, 1 / (3 * 2), 1 / (3 * 2)]])
    assert torch.allclose(grad, want, atol=1e-7)
    assert out.clip_fraction == pytest.approx(2 / 5)  # e above, 1/e below with A < 0
    assert out.ratio_mean == pytest.approx((1 + E + 1 / E + 1 + 1) / 5, rel=1e-6)
    assert out.tokens == 5


def test_dapo_clips_higher_and_averages_every_token_of_the_step():
    cfg = make_loss_config("dapo", beta=0.0)
    assert (cfg.epsilon_low, cfg.epsilon_high) == (0.2, 0.28)
    out, grad = run(cfg)
    assert out.loss.item() == pytest.approx(-(0.5 + 0.64 - 0.8 - 1 - 1) / 5, abs=1e-6)
    assert torch.allclose(grad, torch.tensor([[-0.5 / 5, 0.0, 0.0], [0.0, 1 / 5, 1 / 5]]), atol=1e-7)


def test_dr_grpo_divides_by_a_constant_token_count_times_the_sequences():
    out, grad = run(make_loss_config("dr_grpo", beta=0.0, constant_tokens=4))
    assert out.loss.item() == pytest.approx(-(0.5 + 0.6 - 0.8 - 1 - 1) / (4 * 2), abs=1e-6)
    assert torch.allclose(grad, torch.tensor([[-0.5 / 8, 0.0, 0.0], [0.0, 1 / 8, 1 / 8]]), atol=1e-7)


@pytest.mark.parametrize("name", ["cispo", "grpo", "dapo", "dr_grpo"])
def test_micro_batch_shares_add_up_to_the_step(name):
    cfg = make_loss_config(name, beta=0.1)
    ref = torch.tensor([[-1.5, -1.0, -0.5], [-2.5, -0.2, -1.2]])
    whole, g_whole = run(cfg, ref=ref)
    parts = [run(cfg, rows=slice(i, i + 1), ref=ref[i:i + 1], num_tokens=5, num_sequences=2) for i in (0, 1)]
    assert sum(p.loss.item() for p, _ in parts) == pytest.approx(whole.loss.item(), abs=1e-6)
    assert torch.allclose(torch.cat([g for _, g in parts]), g_whole, atol=1e-7)


def test_kl_takes_the_loss_normalisation():
    ref = torch.tensor([[-1.5, -1.0, -0.5], [-2.5, -0.2, -1.2]])
    k3 = k3_kl(torch.tensor(LOGP), ref)
    mask = torch.tensor(MASK)
    per_seq = (k3 * mask).sum(1) / mask.sum(1)
    with_kl, _ = run(make_loss_config("grpo", beta=0.1), ref=ref)
    without, _ = run(make_loss_config("grpo", beta=0.0), ref=ref)
    assert with_kl.loss.item() - without.loss.item() == pytest.approx(0.1 * per_seq.mean().item(), abs=1e-6)
    assert with_kl.kl_loss == pytest.approx(0.1 * per_seq.mean().item(), abs=1e-6)
    assert without.kl == pytest.approx(((k3 * mask).sum() / 5).item(), abs=1e-6)  # reported, not paid


def test_the_correction_weight_scales_the_policy_term_only():
    ref = torch.tensor([[-1.5, -1.0, -0.5], [-2.5, -0.2, -1.2]])
    cfg = make_loss_config("dapo", beta=0.1)
    full, _ = run(cfg, ref=ref)
    half, _ = run(cfg, ref=ref, is_weights=torch.full((2, 3), 0.5))
    assert half.policy_loss == pytest.approx(full.policy_loss / 2, abs=1e-7)
    assert half.kl_loss == pytest.approx(full.kl_loss, abs=1e-7)


def test_registry_names_defaults_and_refusals():
    assert set(loss_names()) >= {"cispo", "grpo", "dapo", "dr_grpo"}
    assert make_loss_config("cispo", beta=0.08) == CispoConfig(beta=0.08)  # the study's, as before
    assert make_loss_config("cispo", beta=0.0, epsilon_high=3.0).epsilon_high == 3.0
    grpo = make_loss_config("grpo", beta=0.04, epsilon_high=0.3)
    assert grpo == ClipLossConfig(variant=ClipVariant.GRPO, epsilon_low=0.2, epsilon_high=0.3, beta=0.04)
    assert grpo.normalise is Normalise.SEQUENCE and grpo.name == "grpo"
    with pytest.raises(ValueError, match="unknown loss 'ppo'"):
        make_loss_config("ppo", beta=0.0)
    with pytest.raises(ValueError, match="epsilon_low"):
        make_loss_config("cispo", beta=0.0, epsilon_low=0.2)
    with pytest.raises(ValueError, match="epsilon_low"):
        make_loss_config("dapo", beta=0.0, epsilon_low=1.5)


def test_the_rl_job_picks_the_loss_by_name():
    from jobs.rl_config import load_config
    from jobs.sections import ConfigError

    lc = load_config(None, ['model="/m"', 'learner.loss="dapo"', "learner.beta=0.0"]).learner_config()
    assert lc.loss_config() == ClipLossConfig(variant=ClipVariant.DAPO, epsilon_low=0.2, epsilon_high=0.28, beta=0.0)
    assert isinstance(load_config(None, ['model="/m"']).learner_config().loss_config(), CispoConfig)
    with pytest.raises(ConfigError, match="epsilon_low"):
        load_config(None, ['model="/m"', "learner.epsilon_low=0.2"])  # cispo has no lower bound
    with pytest.raises(ConfigError, match="loss"):
        load_config(None, ['model="/m"', 'learner.loss="ppo"'])


@pytest.mark.parametrize("name", ["grpo", "dapo", "dr_grpo"])
def test_a_learner_step_with_each_loss(tiny_dir, name):
    from kgym.training.learner_core import Learner, LearnerConfig, StepStatus

    from tiny import make_batch

    learner = Learner(LearnerConfig(model_path=str(tiny_dir), quantize_4bit=False, compute_dtype="float32",
                                    device="cpu", loss=name, beta=0.08, lr=1e-3))
    m = learner.step(make_batch(0))
    assert m.status == StepStatus.OK and math.isfinite(m.loss) and learner.policy_version == 1
