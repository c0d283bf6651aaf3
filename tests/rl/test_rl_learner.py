"""The Learner on the tiny model (CPU): the NF4 QLoRA path, the reference policy (SFT adapter, not the
raw base), recomputed old log-probs and drift, micro-batching, exact resume, checkpoints peft loads."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from kgym.rl import CispoConfig, EntropyBonusConfig, TrainBatch

pytest.importorskip("peft")
from kgym.training.learner_core import Learner, LearnerConfig, StepStatus, latest_checkpoint  # noqa: E402

from tiny import make_batch, with_sampler_logprobs  # noqa: E402


def fp32(tiny_dir, **kw) -> LearnerConfig:
    return LearnerConfig(model_path=str(tiny_dir), quantize_4bit=False, compute_dtype="float32", device="cpu", **kw)


def test_nf4_qlora_step_on_cpu(tiny_dir):
    import bitsandbytes as bnb

    learner = Learner(LearnerConfig(model_path=str(tiny_dir), device="cpu"))  # the defaults: NF4, bf16, r=8
    layer = learner.model.base_model.model.model.layers[0].self_attn.q_proj
    assert isinstance(layer.base_layer, bnb.nn.Linear4bit) and layer.base_layer.weight.quant_type == "nf4"
    assert layer.r["default"] == 8 and layer.scaling["default"] == 2.0  # alpha 16 / r 8
    targets = {n.split(".")[-4] for n, p in learner.model.named_parameters() if p.requires_grad}
    assert targets == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
    assert learner.optimizer.param_groups[0]["lr"] == 1e-5
    before = learner.adapter_state()
    m = learner.step(make_batch(0))
    assert m.status is StepStatus.OK and m.step == 1 and m.policy_version == 1
    assert m.kl == 0.0  # the adapter starts at B = 0: policy == reference
    assert m.ratio_mean == pytest.approx(1.0) and m.recomputed_samples == 4
    assert m.grad_norm > 0 and m.tokens_per_s > 0 and m.peak_memory_bytes > 0
    assert m.loss_tokens == make_batch(0).loss_tokens
    after = learner.adapter_state()
    assert any(not torch.equal(before[k], after[k]) for k in before)


@pytest.fixture(scope="module")
def sft_adapter(tiny_dir, tmp_path_factory):
    """An "SFT" adapter: random non-zero LoRA weights on the tiny model, saved as peft saves it."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(1)
    base = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    sft = get_peft_model(base, LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", init_lora_weights=False))
    path = tmp_path_factory.mktemp("sft-adapter")
    sft.save_pretrained(path)
    return path


def test_reference_after_sft_is_the_sft_adapter_not_the_base(tiny_dir, sft_adapter):
    learner = Learner(fp32(tiny_dir, sft_adapter=str(sft_adapter), lr=1e-3))
    batch = make_batch(1)
    policy = learner.logprobs(batch)
    reference = learner.logprobs(batch, reference=True)
    with learner.model.disable_adapter():
        raw_base = learner.logprobs(batch)
    for p, r, b in zip(policy, reference, raw_base):
        assert torch.equal(p, r)  # RL starts at the SFT policy: KL 0
        assert (p - b).abs().max() > 1e-3  # the raw base is a different policy
    m = learner.step(batch)
    assert m.kl == 0.0
    kl_vs_base = sum(float((torch.exp(b - p) - (b - p) - 1).sum()) for p, b in zip(policy, raw_base))
    assert kl_vs_base > 0.0
    # after an update the reference is still the frozen SFT adapter, and the policy moved away from it
    m2 = learner.step(batch)
    assert m2.kl > 0.0
    assert all(torch.equal(r, r2) for r, r2 in zip(reference, learner.logprobs(batch, reference=True)))
    assert not any(p.requires_grad for n, p in learner.model.named_parameters() if "sft_reference" in n)


def test_sampler_logprobs_used_drift_reported_missing_ones_recomputed(tiny_dir):
    learner = Learner(fp32(tiny_dir, correction="none"))
    batch = make_batch(2)
    shifted = with_sampler_logprobs(learner, batch, offset=0.05)  # the sampler saw slightly other logprobs
    mixed = TrainBatch(shifted.samples[:3] + batch.samples[3:])  # the last sample has none
    m = learner.step(mixed)
    assert m.recomputed_samples == 1
    assert m.logprob_drift == pytest.approx(0.05, abs=1e-4)
    assert m.drift_tokens == sum(s.loss_tokens for s in mixed.samples[:3])
    assert m.ratio_mean > 1.0  # learner logp > sampler logp on the three sampled ones
    always = Learner(fp32(tiny_dir, correction="recompute"))
    m2 = always.step(shifted)
    assert m2.recomputed_samples == 4 and m2.ratio_mean == pytest.approx(1.0)
    assert m2.logprob_drift == pytest.approx(0.05, abs=1e-4)  # drift is still measured
    assert m2.sampler_kl == pytest.approx(math.exp(0.05) - 0.05 - 1, abs=1e-5)
    assert m2.is_truncated_fraction == 0.0


def test_micro_batches_by_token_budget_give_the_same_update(tiny_dir):
    batch = make_batch(3, n=6)
    one = Learner(fp32(tiny_dir, lr=1e-3))
    many = Learner(fp32(tiny_dir, lr=1e-3, token_budget=16))
    m1, m2 = one.step(batch), many.step(batch)
    assert m1.micro_batches == 1 and m2.micro_batches >= 3
    assert m1.loss == pytest.approx(m2.loss, abs=1e-6)
    a, b = one.adapter_state(), many.adapter_state()
    # Summation order differs between the two, and Adam's first step is ~lr * sign(g), which magnifies
    # float noise on near-zero gradients: allow 1e-3 of one step (lr 1e-3), no more.
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_no_loss_tokens_is_an_explicit_no_op(tiny_dir):
    learner = Learner(fp32(tiny_dir))
    s = make_batch(4).samples[0]
    empty = TrainBatch((dataclasses.replace(s, loss_mask=tuple(0 for _ in s.loss_mask)),))
    m = learner.step(empty)
    assert m.status is StepStatus.NO_LOSS_TOKENS and m.policy_version == 0 and learner.step_count == 0


def test_a_batch_without_signal_moves_nothing_even_after_a_real_step(tiny_dir):
    # Every group scored the same (zero advantages), no KL or entropy term: the gradient is zero, and an
    # AdamW step would still move the weights by its momentum from the step before.
    learner = Learner(fp32(tiny_dir, beta=0.0, lr=1e-3))
    assert learner.step(make_batch(0)).status is StepStatus.OK
    before = learner.adapter_state()
    flat = TrainBatch(tuple(dataclasses.replace(s, reward=0.5) for s in make_batch(1).samples))
    m = learner.step(flat)
    assert m.status is StepStatus.NO_SIGNAL and m.policy_version == 1 and learner.step_count == 1
    after = learner.adapter_state()
    assert all(torch.equal(before[k], after[k]) for k in before)
    # with the KL term on, the same batch is a real step (it pulls towards the reference)
    kl = Learner(fp32(tiny_dir, lr=1e-3))
    kl.step(make_batch(0))
    assert kl.step(flat).status is StepStatus.OK


def test_resume_gives_the_identical_next_step(tiny_dir, tmp_path):
    """NF4 base, adaptive entropy bonus, sampler log-probs: checkpoint at step 2, resume, step 3 equal."""
    cfg = LearnerConfig(model_path=str(tiny_dir), device="cpu", lr=1e-3, checkpoint_dir=str(tmp_path / "run"),
                        checkpoint_every=2, entropy=EntropyBonusConfig(target=100.0, delta=0.01), total_steps=10)
    a = Learner(cfg)
    batches = [with_sampler_logprobs(a, make_batch(10 + k), offset=0.02 * k) for k in range(3)]
    for b in batches[:2]:
        m = a.step(b)
    entropy_at_2 = a.entropy.state_dict()
    assert entropy_at_2["coef"] > 0  # the controller has state worth restoring
    assert m.checkpoint is not None
    ckpt = latest_checkpoint(tmp_path / "run")
    assert str(ckpt) == m.checkpoint and ckpt.name == "step-000002"
    assert not list((tmp_path / "run").glob(".tmp-*"))  # renamed into place, nothing half-written left
    third = a.step(batches[2])

    b = Learner(dataclasses.replace(cfg, checkpoint_dir=str(tmp_path / "resumed")))
    b.resume(ckpt)
    assert b.step_count == 2 and b.policy_version == 2 and b.entropy.state_dict() == entropy_at_2
    resumed = b.step(batches[2])
    assert resumed.loss == third.loss  # bit-identical on CPU
    assert resumed.entropy_coef == third.entropy_coef and resumed.lr == third.lr
    sa, sb = a.adapter_state(), b.adapter_state()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)


def test_checkpoint_adapter_loads_in_peft(tiny_dir, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    learner = Learner(fp32(tiny_dir, lr=1e-3))
    batch = make_batch(5)
    learner.step(batch)
    ckpt = learner.save_checkpoint(tmp_path)
    files = {p.name for p in (ckpt / "adapter").iterdir()}
    assert {"adapter_config.json", "adapter_model.safetensors"} <= files
    # the layout vLLM's LoRA loader parses: peft's key names without the adapter name, a plain config
    import json
    import re

    from safetensors.torch import load_file

    keys = load_file(str(ckpt / "adapter" / "adapter_model.safetensors")).keys()
    assert keys and all(re.fullmatch(r"base_model\.model\..+\.(q|k|v|o|gate|up|down)_proj\.lora_[AB]\.weight", k)
                        for k in keys)
    conf = json.loads((ckpt / "adapter" / "adapter_config.json").read_text())
    assert conf["peft_type"] == "LORA" and conf["r"] == 8 and conf["lora_alpha"] == 16
    assert not conf.get("modules_to_save")
    base = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    loaded = PeftModel.from_pretrained(base, str(ckpt / "adapter"))
    loaded.eval()
    s = batch.samples[0]
    ids = torch.tensor([s.prompt_ids + s.completion_ids])
    with torch.no_grad():
        logits = loaded(input_ids=ids).logits[0, len(s.prompt_ids) - 1:-1]
    lp = torch.log_softmax(logits, -1).gather(-1, torch.tensor(s.completion_ids).unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(lp, learner.logprobs(batch)[0], atol=1e-5)


def test_logprob_shaping_and_verl_bounds_reach_the_step(tiny_dir):
    from kgym.rl import LogProbShapingConfig

    batch = make_batch(6)
    plain = Learner(fp32(tiny_dir)).step(batch)
    shaped = Learner(fp32(tiny_dir, shaping=LogProbShapingConfig(zeta=0.5))).step(batch)
    assert shaped.status is StepStatus.OK and shaped.loss != plain.loss
    verl = Learner(fp32(tiny_dir))
    verl.loss = CispoConfig.verl()  # a bound no loss name stands for: the learner's loss config set by hand
    verl = verl.step(batch)
    assert verl.status is StepStatus.OK and verl.loss == pytest.approx(plain.loss, abs=1e-6)  # on-policy: r = 1


def test_one_batch_reused_for_two_steps_keeps_the_behaviour_policy_as_old(tiny_dir):
    learner = Learner(fp32(tiny_dir, lr=5e-3, correction="none"))
    batch = learner.with_old_logprobs(make_batch(7))  # none had sampler log-probs: fill them once
    assert all(s.sampler_logprobs is not None for s in batch.samples)
    first = learner.step(batch)
    second = learner.step(batch)
    assert first.recomputed_samples == 0 and first.ratio_mean == pytest.approx(1.0, abs=1e-6)
    assert abs(second.ratio_mean - 1.0) > 1e-4  # the update between the two steps shows in the ratio
    assert second.logprob_drift > 0


def test_config_refuses_lora_settings_that_an_sft_adapter_would_override(tiny_dir):
    with pytest.raises(ValueError, match="SFT adapter"):
        fp32(tiny_dir, sft_adapter="/some/adapter", lora_r=16)
    with pytest.raises(ValueError):
        fp32(tiny_dir, lr=1.0)
    with pytest.raises(ValueError):
        fp32(tiny_dir, correction="vllm")
