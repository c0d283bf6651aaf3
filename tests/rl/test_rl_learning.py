"""A learning test: on a toy task the tiny model learns within a CI budget.

Task: after a fixed prompt, sample a group of 8 answers of 8 tokens; reward = the fraction of answer
tokens in a target set (the 256 lowest ids). Each step: sample with the current policy (its
per-token log-probs go in as the sampler's), score, one CISPO step. The control samples the same way,
with the same seeds, from a learner that never steps. The trained policy's mean reward over the last
steps must beat the control's; no absolute number is asserted.

The model is the shared tiny model with its lm_head scaled by 8: at Hugging Face's init (std 0.02)
the random model is near-uniform over 1024 tokens and its lm_head can raise a 256-token set's logits
by ~0.2 at most, so no LoRA could move the reward in a CI budget. lr is 1e-3, not the study's 1e-5,
for the same reason (16 steps, not 300); beta 0 and no entropy bonus, so nothing holds the policy back.
"""

from __future__ import annotations

import pytest
import torch

from kgym.rl import CispoConfig, EntropyBonusConfig, Sample, TrainBatch

pytest.importorskip("peft")
from ray_cluster.learner_core import Learner, LearnerConfig, StepStatus  # noqa: E402

TARGET = 256
PROMPT = [5, 17, 42, 99]
GROUP, LENGTH, STEPS, LAST = 8, 8, 16, 6


@pytest.fixture(scope="module")
def sharp_dir(tiny_dir, tmp_path_factory):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    with torch.no_grad():
        model.lm_head.weight.mul_(8.0)
    path = tmp_path_factory.mktemp("tiny-sharp")
    model.save_pretrained(path)
    return path


def sample_group(learner: Learner, seed: int) -> TrainBatch:
    torch.manual_seed(seed)  # generate() draws from the global generator
    prompt = torch.tensor([PROMPT] * GROUP)
    out = learner.model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt), do_sample=True, top_k=0,
                                 top_p=1.0, temperature=1.0, max_new_tokens=LENGTH, min_new_tokens=LENGTH,
                                 output_scores=True, return_dict_in_generate=True, pad_token_id=0, use_cache=True)
    comp = out.sequences[:, len(PROMPT):]
    lp = torch.stack([torch.log_softmax(s.float(), -1).gather(-1, comp[:, t:t + 1]).squeeze(-1)
                      for t, s in enumerate(out.scores)], dim=1)
    return TrainBatch(tuple(
        Sample(prompt_ids=PROMPT, completion_ids=comp[i].tolist(), loss_mask=[1] * LENGTH, group_id="toy",
               reward=float((comp[i] < TARGET).float().mean()), sampler_logprobs=lp[i].tolist())
        for i in range(GROUP)))


def run(model_dir, train: bool) -> list[float]:
    learner = Learner(LearnerConfig(model_path=str(model_dir), quantize_4bit=False, compute_dtype="float32",
                                    device="cpu", lr=1e-3, total_steps=100, cispo=CispoConfig(beta=0.0),
                                    entropy=EntropyBonusConfig(adaptive=False), gradient_checkpointing=False))
    rewards = []
    for k in range(STEPS):
        batch = sample_group(learner, seed=k)
        rewards.append(sum(s.reward for s in batch.samples) / GROUP)
        if train:
            m = learner.step(batch)
            assert m.status in (StepStatus.OK, StepStatus.NO_SIGNAL)  # a group that all scored the same: no update
            if m.status is StepStatus.OK:
                assert m.logprob_drift < 1e-3  # the sampler is the learner's own model (cached vs full forward)
    return rewards


def test_mean_reward_rises_against_a_control_without_updates(sharp_dir):
    trained = run(sharp_dir, train=True)
    control = run(sharp_dir, train=False)
    assert trained[0] == control[0]  # same seed, same policy before the first update
    late_trained = sum(trained[-LAST:]) / LAST
    late_control = sum(control[-LAST:]) / LAST
    early_trained = sum(trained[:LAST]) / LAST
    print(f"mean reward: trained {early_trained:.3f} -> {late_trained:.3f}, control late {late_control:.3f}")
    assert late_trained > late_control + 0.2
    assert late_trained > early_trained
