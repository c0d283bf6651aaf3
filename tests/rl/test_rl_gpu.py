"""The learner on a CUDA GPU (skipped on CPU; run on the H200): the NF4 QLoRA step of the tiny model,
its checkpoint, and a resume giving the same next step (CUDA kernels may reorder sums: within 1e-5
rather than bit-identical), with the device peak memory reported."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from kgym.rl import EntropyBonusConfig

pytest.importorskip("peft")
pytest.importorskip("bitsandbytes")
from kgym.training.learner_core import Learner, LearnerConfig, StepStatus, latest_checkpoint  # noqa: E402

from tiny import make_batch, with_sampler_logprobs  # noqa: E402

pytestmark = pytest.mark.gpu


def test_nf4_step_checkpoint_and_resume_on_cuda(tiny_dir, tmp_path):
    cfg = LearnerConfig(model_path=str(tiny_dir), device="cuda", lr=1e-3, loss="cispo", beta=0.08,
                        entropy=EntropyBonusConfig(target=100.0), checkpoint_dir=str(tmp_path / "run"),
                        checkpoint_every=2, total_steps=10)
    a = Learner(cfg)
    layer = a.model.base_model.model.model.layers[0].self_attn.q_proj.base_layer
    assert layer.weight.device.type == "cuda" and layer.weight.quant_type == "nf4"
    batches = [with_sampler_logprobs(a, make_batch(20 + k), offset=0.01) for k in range(3)]
    first = a.step(batches[0])
    assert first.status is StepStatus.OK and first.kl == 0.0
    assert first.peak_memory_bytes > 0 and first.train_pass_s > 0
    a.step(batches[1])
    third = a.step(batches[2])
    b = Learner(dataclasses.replace(cfg, checkpoint_dir=str(tmp_path / "resumed")))
    b.resume(latest_checkpoint(tmp_path / "run"))
    again = b.step(batches[2])
    assert again.loss == pytest.approx(third.loss, abs=1e-5)
    sa, sb = a.adapter_state(), b.adapter_state()
    assert all(torch.allclose(sa[k], sb[k], atol=1e-5) for k in sa)


def test_chunked_logprobs_on_cuda_match_and_lower_the_peak(tiny_dir):
    """Issue 28: on CUDA (NF4 base, bf16 compute) the chunked log-probs equal the full-logits ones to
    bf16 precision, and a long episode's step peaks lower (the tiny model's vocabulary is 1024, so the
    saving is tens of MB here; benchmarks/learner_step.py --seq-len 16384 shows it at 152K)."""
    from kgym.rl import Sample, TrainBatch

    g = torch.Generator().manual_seed(0)
    c = 4000
    batch = TrainBatch((Sample(prompt_ids=torch.randint(3, 1000, (16,), generator=g).tolist(),
                               completion_ids=torch.randint(3, 1000, (c,), generator=g).tolist(),
                               loss_mask=[1] * c, group_id="g", advantage=1.0),))
    peaks, lps = {}, {}
    for chunk in (0, 256):  # the full path first: anything it leaves allocated only raises the chunked peak
        learner = Learner(LearnerConfig(model_path=str(tiny_dir), device="cuda", loss="cispo", beta=0.08,
                                        logits_chunk=chunk, temperature=0.7))
        lps[chunk] = learner.logprobs(batch)[0]
        m = learner.step(batch)
        assert m.status is StepStatus.OK
        peaks[chunk] = m.peak_memory_bytes
        del learner
        torch.cuda.empty_cache()
    print(f"peak step memory: chunked {peaks[256] / 2**20:.1f} MiB, full logits {peaks[0] / 2**20:.1f} MiB")
    assert (lps[256] - lps[0]).abs().max() < 2e-2
    assert peaks[256] < peaks[0]
