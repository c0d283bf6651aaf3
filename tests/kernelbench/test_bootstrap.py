"""The paired bootstrap against cases with known answers, and its speed."""

from __future__ import annotations

import time

import numpy as np
import pytest

from kgym.kernelbench import KernelBenchError, ProblemResult, compare, paired_bootstrap


def test_identical_sets_have_zero_delta_and_zero_width():
    r = paired_bootstrap([True, False, True], [True, False, True])
    assert (r.delta_pp, r.ci95_pp, r.gained, r.lost) == (0.0, (0.0, 0.0), 0, 0)


def test_all_gained_is_certain():
    r = paired_bootstrap([False] * 10, [True] * 10, resamples=1000)
    assert r.delta_pp == 100.0 and r.ci95_pp == (100.0, 100.0) and r.gained == 10


def test_the_studys_step_100_correctness_interval():
    # figures.json, sft_rl100 vs sft, correct: 8 gained, 1 lost of 200 -> +3.5 pp, 95% [+1.0, +6.5]
    a = [False] * 8 + [True] + [False] * 191
    b = [True] * 8 + [False] + [False] * 191
    r = paired_bootstrap(a, b)  # 100,000 resamples, seed 42
    assert (r.gained, r.lost, r.n) == (8, 1, 200)
    assert r.delta_pp == pytest.approx(3.5)
    assert r.ci95_pp == pytest.approx((1.0, 6.5), abs=0.5)
    assert r.figures() == {"delta_pp": r.delta_pp, "ci95_pp": list(r.ci95_pp), "gained": 8, "lost": 1}


def test_matches_index_resampling_in_distribution():
    rng = np.random.default_rng(0)
    a, b = rng.random(150) < 0.3, rng.random(150) < 0.4
    fast = paired_bootstrap(a, b, resamples=100_000, seed=1)
    idx = rng.integers(0, 150, size=(20_000, 150))
    d = (b[idx].mean(1) - a[idx].mean(1)) * 100
    lo, hi = np.percentile(d, [2.5, 97.5])
    assert fast.ci95_pp[0] == pytest.approx(lo, abs=1.4) and fast.ci95_pp[1] == pytest.approx(hi, abs=1.4)


def test_seeded_and_fast():
    a, b = [True, False] * 100, [True, True] * 100
    t = time.perf_counter()
    r1 = paired_bootstrap(a, b, seed=7)
    assert time.perf_counter() - t < 0.5
    assert r1 == paired_bootstrap(a, b, seed=7)


def test_compare_pairs_by_problem_and_refuses_mismatch():
    mk = lambda m, pid, ok, x=None: ProblemResult(m, 1, pid, True, ok, x, x)  # noqa: E731
    a = [mk("sft", 1, True, 1.2), mk("sft", 2, False), mk("sft", 3, True, 0.5)]
    b = [mk("rl", 3, True, 2.0), mk("rl", 2, True, 0.9), mk("rl", 1, False)]
    out = compare(a, b, resamples=2000)
    assert (out["correct"].gained, out["correct"].lost) == (1, 1)
    assert (out["fast_eager"].gained, out["fast_eager"].lost) == (1, 1)
    assert out["fast_compile"].delta_pp == 0.0
    with pytest.raises(KernelBenchError, match="different problems"):
        compare(a, b[:2])
    with pytest.raises(KernelBenchError, match="equal-length"):
        paired_bootstrap([True], [True, False])
