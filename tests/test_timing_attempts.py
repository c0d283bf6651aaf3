"""The hidden-work tripwire judged over timed batches (verifier 11): a batch whose host wall clock
exceeds the timed stream's span is discarded, never used for the figure; only a candidate whose every
batch shows such work fails (isolation). On an H100 shared with a colocated RL job, honest multi-op
forwards (conv2d_module, linear_groupnorm_relu, linear_max_gelu, kernelbook) failed at isolation on
their first batch and passed alone (docs/benchmarks.md, 2026-12-06). The attempts are scripted here;
the tripwire itself runs on a GPU (tests/test_gpu_rules.py)."""

from __future__ import annotations

import pytest
import torch

from kgym.verify.parent.verdict_draft import VerdictDraft
from kgym.verify.parent.verifier import HiddenWork, Verifier, VerifyConfig
from kgym.verify.timing import Measurement

STABLE = Measurement([1.0] * 10, [1.1] * 10, "cuda-events", [1.05] * 10)
NOISY = Measurement([1.0, 2.0] * 5, [2.1] * 10, "cuda-events", [2.05] * 10)


def _attempts(script):
    """`Verifier._time_attempts` on a bare verifier whose timed batches return `script` in order."""
    ver = Verifier.__new__(Verifier)
    ver.device = torch.device("cuda")
    calls = iter(script)
    ver._timing_attempt = lambda *a, **k: next(calls)
    v = VerdictDraft()  # the verifier's verdict while it is decided
    t = ver._time_attempts(None, None, None, None, None, VerifyConfig(max_remeasure=2), v, 10, 2, [])
    return t, v


def test_a_batch_with_hidden_work_is_discarded_and_a_clean_one_counts():
    t, v = _attempts([HiddenWork(0.4), STABLE])
    assert v.gate is None and t is not None and t.median_ms == pytest.approx(1.0) and t.stable
    assert v.timings["candidate"] is t
    assert any("1 timed batch(es) discarded for work outside the timed stream (0.400" in n for n in v.notes)


def test_hidden_work_in_every_batch_fails_isolation():
    t, v = _attempts([HiddenWork(0.4), HiddenWork(0.5), HiddenWork(0.3)])
    assert t is None and v.gate == "isolation" and not v.passed
    assert "0.400, 0.500, 0.300 ms per run in each of 3 timed batches" in v.reason
    assert "candidate" not in v.timings


def test_a_discarded_batch_is_never_the_figure_even_when_the_clean_one_is_noisy():
    t, v = _attempts([NOISY, HiddenWork(0.2), HiddenWork(0.2)])
    assert t is not None and t.median_ms == pytest.approx(NOISY.median_ms) and not t.stable
    assert v.gate == "timing"  # the clean batch's variation, judged as always
