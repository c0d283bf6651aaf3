"""The same batch through TRL 1.16's GRPOTrainer losses (`GRPOTrainer._compute_loss`, the function its
training step calls: cispo, and grpo, dapo and dr_grpo at the end) and through kgym gives the same
loss, within 1e-6.

Where the definitions coincide: bound mode 'trl' (ratio capped at epsilon_high, detached), token-level
ratios, k3 KL with beta (plain, and TRL's default bias-corrected k3 * r), the loss divided by the
count of loss tokens, no entropy bonus, temperature 1, prompts of equal length (TRL passes no
position ids, so left padding would shift its positions; kgym's collate counts positions from the
attention mask). TRL computes its own log-probs (its fused lm head); kgym's side slices the logits as
`Learner._forward` does (collate's layout, logits_to_keep = C + 1), so the comparison covers that too.
The trainer is built on the tiny model and never trained: `_compute_loss` is called in eval mode,
where TRL's cispo normaliser is exactly `num_items_in_batch`.
"""

from __future__ import annotations

import pytest
import torch

from kgym.rl import BoundMode, CispoConfig, LossInputs, Sample, cispo_loss, collate, make_loss_config, policy_loss

pytest.importorskip("trl")
pytest.importorskip("peft")

B, P, C = 4, 5, 6


@pytest.fixture(scope="module", params=[False, True], ids=["k3", "k3-bias-corrected"])
def trainer(request, tiny_dir, tiny_tok, tmp_path_factory):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    args = GRPOConfig(output_dir=str(tmp_path_factory.mktemp("grpo")), use_cpu=True, bf16=False, loss_type="cispo",
                      epsilon_high=1.5, beta=0.08, temperature=1.0, per_device_train_batch_size=B,
                      num_generations=B, max_completion_length=C, report_to="none", save_strategy="no", seed=0,
                      use_bias_correction_kl=request.param)
    data = Dataset.from_dict({"prompt": ["a b c"] * B})
    return GRPOTrainer(model=model, reward_funcs=lambda completions, **kw: [0.0] * len(completions), args=args,
                       train_dataset=data, processing_class=tiny_tok)


def trl_batch(model):
    """A batch in TRL's `_compute_loss` form and in kgym's (collate's layout), with old and reference
    log-probs moved away from the current ones so that some ratios pass the bounds."""
    g = torch.Generator().manual_seed(3)
    prompt = torch.randint(3, 1000, (B, P), generator=g)
    completion = torch.randint(3, 1000, (B, C), generator=g)
    cmask = torch.ones(B, C)
    cmask[1, 4:] = 0  # a shorter completion (right padding)
    cmask[3, 2:] = 0
    adv = torch.tensor([1.0, -0.5, 0.25, -0.75])
    model.eval()

    samples = [Sample(prompt_ids=prompt[i].tolist(), completion_ids=completion[i, :int(cmask[i].sum())].tolist(),
                      loss_mask=[1] * int(cmask[i].sum()), group_id="g", advantage=float(adv[i])) for i in range(B)]
    pb = collate(samples, pad_id=0)
    completion_ids = pb.completion_ids  # padding positions hold pad_id; masked out on both sides
    with torch.no_grad():
        logp_now = our_logprobs(model, pb)
    old = logp_now + torch.randn(B, C, generator=g) * 0.6
    ref = logp_now + torch.randn(B, C, generator=g) * 0.3
    inputs = {"prompt_ids": prompt, "prompt_mask": torch.ones(B, P, dtype=torch.long),
              "completion_ids": completion_ids, "completion_mask": pb.loss_mask.long(), "advantages": adv,
              "old_per_token_logps": old, "ref_per_token_logps": ref,
              "num_items_in_batch": pb.loss_mask.sum()}
    return inputs, pb, adv, old, ref


def our_logprobs(model, pb):
    logits = model(input_ids=pb.input_ids, attention_mask=pb.attention_mask, position_ids=pb.position_ids,
                   logits_to_keep=C + 1).logits[:, :-1]
    return torch.log_softmax(logits.float(), -1).gather(-1, pb.completion_ids.unsqueeze(-1)).squeeze(-1)


def assert_same(trainer, inputs, ours):
    model = trainer.model
    trl_loss = trainer._compute_loss(model, inputs)
    assert abs(trl_loss.item() - ours.loss.item()) < 1e-6, (trl_loss.item(), ours.loss.item())
    # gradients agree too (same parameters, same loss up to float error)
    model.zero_grad()
    trainer._compute_loss(model, inputs).backward()
    trl_grad = model.lm_head.weight.grad.clone()
    model.zero_grad()
    ours.loss.backward()
    assert torch.allclose(model.lm_head.weight.grad, trl_grad, atol=1e-6)


def test_trl_cispo_loss_matches(trainer):
    inputs, pb, adv, old, ref = trl_batch(trainer.model)
    ours = cispo_loss(LossInputs(logprobs=our_logprobs(trainer.model, pb), old_logprobs=old, advantages=adv,
                                 loss_mask=pb.loss_mask, ref_logprobs=ref),
                      CispoConfig(bound=BoundMode.TRL, epsilon_high=1.5, beta=0.08,
                                  kl_importance_weighted=trainer.args.use_bias_correction_kl))
    assert 0.0 < ours.clip_fraction < 1.0  # the cap is exercised
    assert ours.kl > 0.0
    assert_same(trainer, inputs, ours)


@pytest.fixture(scope="module", params=["grpo", "dapo", "dr_grpo"])
def clip_trainer(request, tiny_dir, tiny_tok, tmp_path_factory):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    high = 0.28 if request.param == "dapo" else 0.2
    args = GRPOConfig(output_dir=str(tmp_path_factory.mktemp("grpo")), use_cpu=True, bf16=False,
                      loss_type=request.param, epsilon=0.2, epsilon_high=high, beta=0.08, temperature=1.0,
                      per_device_train_batch_size=B, num_generations=B, max_completion_length=C, report_to="none",
                      save_strategy="no", seed=0, use_bias_correction_kl=False)
    data = Dataset.from_dict({"prompt": ["a b c"] * B})
    return GRPOTrainer(model=model, reward_funcs=lambda completions, **kw: [0.0] * len(completions), args=args,
                       train_dataset=data, processing_class=tiny_tok)


def test_trl_clipped_losses_match(clip_trainer):
    """kgym's grpo, dapo and dr_grpo (their own default bounds; Dr. GRPO's constant is TRL's
    max_completion_length) against TRL's loss types of the same names."""
    inputs, pb, adv, old, ref = trl_batch(clip_trainer.model)
    config = make_loss_config(clip_trainer.args.loss_type, beta=0.08, constant_tokens=C)
    ours = policy_loss(LossInputs(logprobs=our_logprobs(clip_trainer.model, pb), old_logprobs=old, advantages=adv,
                                  loss_mask=pb.loss_mask, ref_logprobs=ref), config)
    assert 0.0 < ours.clip_fraction < 1.0  # the clip is exercised
    assert_same(clip_trainer, inputs, ours)
