"""The learner's batch format, how a multi-turn episode flattens into it, micro-batch packing, padding."""

import pytest
import torch

from kgym.rl import Sample, TrainBatch, Turn, collate, flatten_turns, plan_micro_batches


def sample(p, c, **kw):
    kw.setdefault("reward", 1.0)
    return Sample(prompt_ids=list(range(1, p + 1)), completion_ids=list(range(10, 10 + c)), loss_mask=[1] * c,
                  group_id=kw.pop("group_id", "g"), **kw)


def test_multi_turn_episode_flattens_with_tool_tokens_masked():
    turns = [Turn((5, 6), True, (-0.1, -0.2)), Turn((7, 8, 9), False), Turn((4,), True, (-0.3,))]
    s = flatten_turns([1, 2, 3], turns, "task-1", reward=0.5, policy_version=3)
    assert s.completion_ids == (5, 6, 7, 8, 9, 4)
    assert s.loss_mask == (1, 1, 0, 0, 0, 1)
    assert s.sampler_logprobs == (-0.1, -0.2, 0.0, 0.0, 0.0, -0.3)
    assert s.policy_version == 3 and s.loss_tokens == 3
    missing = flatten_turns([1], [Turn((5,), True, None), Turn((6,), True, (-0.1,))], "t", reward=0.0)
    assert missing.sampler_logprobs is None  # one model turn without logprobs: recompute the sample


@pytest.mark.parametrize("kw", [dict(loss_mask=[1]), dict(reward=None), dict(advantage=1.0),
                                dict(sampler_logprobs=[0.5, -1.0]), dict(prompt_ids=[])])
def test_sample_refuses_inconsistent_fields(kw):
    base = dict(prompt_ids=[1], completion_ids=[2, 3], loss_mask=[1, 1], group_id="g", reward=1.0)
    base.update(kw)
    with pytest.raises(ValueError):
        Sample(**base)


def test_batch_refuses_mixed_rewards_and_advantages():
    with pytest.raises(ValueError):
        TrainBatch((sample(2, 2), sample(2, 2, reward=None, advantage=0.3)))


def test_plan_respects_budget_and_keeps_oversized_alone():
    samples = [sample(4, 4), sample(2, 2), sample(30, 30), sample(3, 3), sample(4, 4)]
    plans = plan_micro_batches(samples, token_budget=16)
    assert sorted(i for p in plans for i in p) == list(range(5))
    assert [2] in plans  # 60 tokens > budget: alone
    for p in plans:
        if p != [2]:
            w = max(samples[i].length for i in p)
            assert len(p) * w <= 16
    assert plan_micro_batches(samples, 16) == plans  # deterministic


def test_collate_left_pads_prompts_right_pads_completions_and_counts_positions():
    a = Sample(prompt_ids=[1, 2, 3], completion_ids=[7, 8], loss_mask=[1, 0], group_id="g", reward=0.0,
               sampler_logprobs=[-0.5, 0.0])
    b = Sample(prompt_ids=[4], completion_ids=[9, 9, 9], loss_mask=[1, 1, 1], group_id="g", reward=1.0)
    pb = collate([a, b], pad_id=0)
    assert pb.prompt_width == 3 and pb.completion_width == 3
    assert pb.input_ids.tolist() == [[1, 2, 3, 7, 8, 0], [0, 0, 4, 9, 9, 9]]
    assert pb.attention_mask.tolist() == [[1, 1, 1, 1, 1, 0], [0, 0, 1, 1, 1, 1]]
    assert pb.position_ids[1, 2:].tolist() == [0, 1, 2, 3]  # b's positions as if unpadded
    assert pb.loss_mask.tolist() == [[1, 0, 0], [1, 1, 1]]
    assert pb.has_sampler_logprobs.tolist() == [True, False]
    assert torch.equal(pb.sampler_logprobs[0], torch.tensor([-0.5, 0.0, 0.0]))
