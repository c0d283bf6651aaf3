"""An episode weighs the same in the loss however it was flattened (red team, 2026-12-07).

`kgym.episodes.flatten` gives a repair episode as ONE sample, or as one sample per turn when its chat
template re-renders earlier turns (which the model's behaviour can decide: with TRL's qwen3_6 template a
turn without a tool call makes its episode per-turn; Llama 3.1's makes every one). The advantages
already count such an
episode once (`batch_advantages`); GRPO's and Dr. GRPO's normalisations counted its samples as
sequences, so a per-turn episode of k turns weighed k times a one-sample episode (GRPO) and shrank
every other token's weight (Dr. GRPO). Here the same two episodes, one of them split in two, must
give the loss computed over episodes."""

from __future__ import annotations

import dataclasses

import pytest

from kgym.rl import Sample, TrainBatch

pytest.importorskip("peft")
from kgym.training.learner_core import Learner, LearnerConfig  # noqa: E402

from tiny import with_sampler_logprobs  # noqa: E402

P = (5, 17, 33, 41)
E1, ENV, E2 = (50, 51, 52), (60, 61), (70, 71, 72, 73, 74)  # episode e: turn 1, the env's tokens, turn 2
F = (80, 81, 82, 83)  # episode f: one turn


def batch(split: bool) -> TrainBatch:
    f = Sample(prompt_ids=P, completion_ids=F, loss_mask=(1,) * len(F), group_id="g", reward=0.0, episode_id="f")
    if not split:
        e = Sample(prompt_ids=P, completion_ids=E1 + ENV + E2, loss_mask=(1,) * 3 + (0,) * 2 + (1,) * 5,
                   group_id="g", reward=1.0, episode_id="e")
        return TrainBatch((e, f))
    t1 = Sample(prompt_ids=P, completion_ids=E1, loss_mask=(1,) * 3, group_id="g", reward=1.0, episode_id="e")
    t2 = Sample(prompt_ids=P + E1 + ENV, completion_ids=E2, loss_mask=(1,) * 5, group_id="g", reward=1.0,
                episode_id="e")
    return TrainBatch((t1, t2, f))


@pytest.mark.parametrize("loss, expected", [
    # advantages +1 (e) and -1 (f); on-policy ratio 1, so a token's policy term is -A
    ("grpo", 0.0),  # the mean over episodes of each episode's token mean: (-1 + 1) / 2
    ("dr_grpo", (-8 + 4) / (4 * 2)),  # every token's -A over 4 (constant_tokens) x 2 episodes
])
def test_an_episode_split_per_turn_weighs_as_one_episode(tiny_dir, loss, expected):
    got = []
    for split in (False, True):
        cfg = LearnerConfig(model_path=str(tiny_dir), quantize_4bit=False, compute_dtype="float32", device="cpu",
                            loss=loss, beta=0.0, correction="none", dr_grpo_tokens=4, lr=0.0)
        learner = Learner(cfg)
        b = with_sampler_logprobs(learner, batch(split))
        b = TrainBatch(tuple(dataclasses.replace(s, sampler_logprobs=tuple(v if m else 0.0 for v, m in
                                                                           zip(s.sampler_logprobs, s.loss_mask)))
                             for s in b.samples))
        got.append(learner.step(b).policy_loss)
    assert got[0] == pytest.approx(expected, abs=1e-5)
    assert got[1] == pytest.approx(expected, abs=1e-5), f"split per turn: {got[1]}, one sample: {got[0]}"
