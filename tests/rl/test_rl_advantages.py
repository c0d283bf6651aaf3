"""Group-relative advantages: (R - mean) / std per group, zero for a degenerate group."""

import pytest
import torch

from kgym.rl import AdvantageConfig, group_advantages


def test_two_groups_are_normalised_separately():
    adv = group_advantages([0.0, 1.0, 2.0, 4.0, 4.0, 10.0], ["a", "a", "a", "b", "b", "b"])
    a = torch.tensor([0.0, 1.0, 2.0])
    assert torch.allclose(adv[:3], (a - a.mean()) / (a.std(unbiased=False) + 1e-6))
    b = torch.tensor([4.0, 4.0, 10.0])
    assert torch.allclose(adv[3:], (b - b.mean()) / (b.std(unbiased=False) + 1e-6))
    assert abs(float(adv[:3].sum())) < 1e-6 and abs(float(adv[3:].sum())) < 1e-5


def test_pair_gives_minus_one_and_one():
    assert torch.allclose(group_advantages([0.0, 1.0], ["g", "g"]), torch.tensor([-1.0, 1.0]), atol=1e-5)


def test_degenerate_and_singleton_groups_are_exactly_zero():
    adv = group_advantages([0.7] * 8 + [0.3], ["same"] * 8 + ["alone"])
    assert torch.equal(adv, torch.zeros(9))


def test_mean_centring_only():
    adv = group_advantages([1.0, 3.0], [0, 0], AdvantageConfig(scale=False))
    assert torch.equal(adv, torch.tensor([-1.0, 1.0]))


def test_refuses_bad_input():
    with pytest.raises(ValueError):
        group_advantages([1.0, 2.0], ["a"])
    with pytest.raises(ValueError):
        group_advantages([1.0, float("nan")], ["a", "a"])


def test_batch_advantages_count_an_episode_once_however_many_samples_it_gave():
    from kgym.rl import Sample, TrainBatch, batch_advantages

    def s(reward, episode=None):
        return Sample(prompt_ids=[1], completion_ids=[2], loss_mask=[1], group_id="g", reward=reward,
                      episode_id=episode)
    # episode "a" (reward 1) fell back to three per-turn samples; "b" (reward 0) is one sample
    adv = batch_advantages(TrainBatch((s(1.0, "a"), s(1.0, "a"), s(1.0, "a"), s(0.0, "b"))))
    assert torch.allclose(adv, torch.tensor([1.0, 1.0, 1.0, -1.0]), atol=1e-5)  # as for one pair, not 3:1
    with pytest.raises(ValueError, match="disagree"):
        batch_advantages(TrainBatch((s(1.0, "a"), s(0.5, "a"))))
    given = TrainBatch((Sample(prompt_ids=[1], completion_ids=[2], loss_mask=[1], group_id="g", advantage=0.3),))
    assert torch.allclose(batch_advantages(given), torch.tensor([0.3]))
