"""Sampler and learner as one policy (issue 28, point 5), on the tiny model (CPU): the learner scores at
the sampler's temperature (and the RL job passes `[sampling] temperature` on), RL runs with every
dropout off whatever the SFT adapter says (KL 0 at step 0 and no drift on an on-policy batch with a
dropout-0.05 SFT adapter), and each correction method reaches the step as its definition says."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch

from kgym.rl import Correction, CorrectionConfig, TrainBatch

pytest.importorskip("peft")
from kgym.training.learner_core import Learner, LearnerConfig, StepStatus  # noqa: E402

from tiny import make_batch, with_sampler_logprobs  # noqa: E402


def fp32(tiny_dir, **kw) -> LearnerConfig:
    return LearnerConfig(model_path=str(tiny_dir), quantize_4bit=False, compute_dtype="float32", device="cpu", **kw)


def plain_logprobs(model, batch: TrainBatch, temperature: float) -> list[torch.Tensor]:
    """What a sampler computes: one eval-mode forward, log softmax(logits / T) in float32."""
    out = []
    with torch.no_grad():
        for s in batch.samples:
            ids = torch.tensor([s.prompt_ids + s.completion_ids])
            logits = model(input_ids=ids).logits[0, len(s.prompt_ids) - 1:-1].float() / temperature
            out.append(torch.log_softmax(logits, -1).gather(-1, torch.tensor(s.completion_ids)[:, None])[:, 0])
    return out


def test_learner_scores_at_the_sampler_temperature(tiny_dir):
    from transformers import AutoModelForCausalLM

    batch = make_batch(11)
    base = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32).eval()
    at_06 = Learner(fp32(tiny_dir, temperature=0.6)).logprobs(batch)  # adapter B = 0: the policy is the base
    for ours, want, at_1 in zip(at_06, plain_logprobs(base, batch, 0.6), plain_logprobs(base, batch, 1.0)):
        assert torch.allclose(ours, want, atol=1e-5)
        assert (ours - at_1).abs().max() > 1e-3  # temperature matters here: the test can tell


def test_rl_job_passes_temperature_and_the_new_learner_keys():
    from jobs.rl_config import load_config
    from jobs.sections import ConfigError

    cfg = load_config(None, ['model="/m"', "sampling.temperature=0.6"]).learner_config()
    assert cfg.temperature == 0.6
    assert cfg.correction_config() == CorrectionConfig(Correction.TIS, 2.0) and cfg.logits_chunk == 1024
    cfg = load_config(None, ['model="/m"', 'learner.correction="recompute"', "learner.correction_cap=3.0",
                             "learner.logits_chunk=0"]).learner_config()
    assert (cfg.correction_config(), cfg.logits_chunk) == (CorrectionConfig(Correction.RECOMPUTE, 3.0), 0)
    with pytest.raises(ConfigError, match="correction"):
        load_config(None, ['model="/m"', 'learner.correction="vllm"'])
    with pytest.raises(ConfigError, match="correction_cap"):
        load_config(None, ['model="/m"', "learner.correction_cap=0.5"])


@pytest.fixture(scope="module")
def sft_dropout(tiny_dir, tmp_path_factory):
    """An SFT adapter as jobs.sft writes one: LoRA dropout 0.05 in its config (random, non-zero weights)."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(3)
    base = AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32)
    sft = get_peft_model(base, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05, target_modules="all-linear",
                                          init_lora_weights=False))
    path = tmp_path_factory.mktemp("sft-dropout")
    sft.save_pretrained(path)
    assert json.loads((path / "adapter_config.json").read_text())["lora_dropout"] == 0.05
    return path


def test_the_fixture_has_teeth_dropout_changes_train_mode_logprobs(tiny_dir, sft_dropout):
    # what the learner did before issue 28: the SFT adapter's dropout live in train mode
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32),
                                      str(sft_dropout), is_trainable=True).train()
    s = make_batch(12).samples[0]
    ids = torch.tensor([s.prompt_ids + s.completion_ids])
    with torch.no_grad():
        a, b = model(input_ids=ids).logits, model(input_ids=ids).logits
    assert (a - b).abs().max() > 1e-3


def test_rl_forces_dropout_off_kl_zero_and_no_drift_on_policy(tiny_dir, sft_dropout, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    learner = Learner(fp32(tiny_dir, sft_adapter=str(sft_dropout), lr=1e-3))
    assert any(n.endswith("lora_dropout.default") for n in learner.dropout_disabled)
    assert any(n.endswith("lora_dropout.sft_reference") for n in learner.dropout_disabled)  # the reference too
    drops = [d for m in learner.model.modules() if isinstance(getattr(m, "lora_dropout", None), torch.nn.ModuleDict)
             for d in m.lora_dropout.values()]
    assert drops and all(isinstance(d, torch.nn.Identity) for d in drops)
    assert all(c.lora_dropout == 0.0 for c in learner.model.peft_config.values())
    assert learner.model.training  # still train mode (gradient checkpointing needs it)

    # the sampler: the SFT policy in eval mode, as vLLM serves it (no dropout)
    sampler = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_dir, dtype=torch.float32),
                                        str(sft_dropout)).eval()
    batch = make_batch(13)
    lps = plain_logprobs(sampler, batch, 1.0)
    on_policy = TrainBatch(tuple(
        dataclasses.replace(s, sampler_logprobs=tuple(v if m else 0.0 for v, m in zip(lp.tolist(), s.loss_mask)))
        for s, lp in zip(batch.samples, lps)))
    m = learner.step(on_policy)
    assert m.status is StepStatus.OK
    assert m.kl == 0.0  # the policy is the reference at step 0 (0.029/token with dropout on)
    assert m.logprob_drift < 1e-5 and m.sampler_kl < 1e-9  # (drift 0.127 with dropout on)
    assert m.is_truncated_fraction == 0.0 and m.is_weight_mean == pytest.approx(1.0, abs=1e-5)
    saved = learner.save_adapter(tmp_path / "adapters")
    assert json.loads((saved / "adapter_config.json").read_text())["lora_dropout"] == 0.0


@pytest.mark.parametrize("delta", [0.05, 1.0])
def test_each_correction_in_the_step(tiny_dir, delta):
    """Sampler log-probs = learner's - delta on every token (the sampler found every token less
    likely), one optimizer step: CISPO's ratio is 1 against the learner's own log-probs, so
      recompute: the plain policy loss P;
      tis:       min(e^delta, cap) * P  (cap 2: e^1 is truncated, every token counted);
      none:      min(e^delta, 5) * P    (the gap in CISPO's ratio)."""
    out = {}
    for method in ("recompute", "tis", "none"):
        learner = Learner(fp32(tiny_dir, correction=method, beta=0.0))
        out[method] = learner.step(with_sampler_logprobs(learner, make_batch(14), offset=delta))
    p = out["recompute"].policy_loss
    assert p != 0.0
    assert out["recompute"].ratio_mean == pytest.approx(1.0) and out["recompute"].recomputed_samples == 4
    assert out["tis"].policy_loss == pytest.approx(min(math.exp(delta), 2.0) * p, rel=1e-5)
    assert out["none"].policy_loss == pytest.approx(min(math.exp(delta), 5.0) * p, rel=1e-5)
    assert out["none"].ratio_mean == pytest.approx(math.exp(delta), rel=1e-5) and out["none"].recomputed_samples == 0
    for m in out.values():  # the gap is measured whatever the method
        assert m.logprob_drift == pytest.approx(delta, abs=1e-5)
        assert m.sampler_kl == pytest.approx(math.exp(delta) - delta - 1, rel=1e-4)
        assert m.is_truncated_fraction == (1.0 if delta == 1.0 else 0.0)
        assert m.is_weight_mean == pytest.approx(min(math.exp(delta), 2.0), rel=1e-5)


def test_the_gap_reaches_the_step_row_and_prometheus():
    from jobs.rl_metrics import RLMetrics
    from kgym.records.rl_records import STEP_COLUMNS
    from kgym.training.learner_core import StepMetrics

    fields = {f.name for f in dataclasses.fields(StepMetrics)}
    columns = {c[0] for c in STEP_COLUMNS}
    for name in ("logprob_drift", "sampler_kl", "is_truncated_fraction"):
        assert name in fields and name in columns  # jobs/rl.py copies these StepMetrics fields into the row
    from kgym.contract.rl_step import StepRow
    from kgym.records.rl_records import Table, conform

    row = {"run_id": "r", "attempt": 1, "step": 1, "status": "ok", "version_before": 0, "version_after": 1,
           "learner_step": 1, "tasks": 1, "groups": 1, "groups_resampled": 0, "groups_all_equal_kept": 0,
           "episodes": 8, "episodes_error": 0, "samples_trained": 8, "dropped_stale": 0, "floor_full": 0.25,
           "train_tokens": 10, "generated_tokens": 10, "rollout_s": 1.0, "generation_s": 0.5, "verification_s": 0.5,
           "verify_busy_s": 1.0, "verifications": 2, "learning_s": 1.0, "sync_s": 0.1, "checkpoint_s": 0.1,
           "eval_s": 0.0, "step_s": 2.0, "logprob_drift": 0.02, "sampler_kl": 0.0004, "is_truncated_fraction": 0.01}
    table = conform(Table.STEPS, [row])
    assert table.column("sampler_kl").to_pylist() == [0.0004]
    metrics = RLMetrics()
    metrics.observe_step(StepRow.from_row(row), [])
    r = metrics.registry
    assert r.get_sample_value("kgym_rl_logprob_drift") == 0.02
    assert r.get_sample_value("kgym_rl_sampler_kl") == 0.0004
    assert r.get_sample_value("kgym_rl_is_truncated_ratio") == 0.01
