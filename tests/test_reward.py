"""kgym.reward: the formula of the docstring, value by value."""

import math
from dataclasses import replace

import pytest

from kgym.contract import CaseResult, Timing, Verdict
from kgym.reward import RewardConfig, group_rewards, loose_credit, reward, speed_score


def verdict(passed_cases=5, loose_cases=5, gate=None, se=1.0, sc=1.0, flagged=False):
    cases = [CaseResult(f"c{i}", i < passed_cases, 0.0, 0.0, i < loose_cases) for i in range(5)]
    timings = {"candidate": Timing(1.0, 0.01, 100, gate != "timing", "cuda_events")}
    return Verdict(passed=gate is None, gate=gate, cases=cases, speedup_eager=se, speedup_compile=sc,
                   flagged=flagged, timings=timings)


def test_hard_gates_score_zero():
    for gate in ("policy", "compile", "launch", "isolation", "timeout", "crash"):
        assert reward(verdict(gate=gate)) == 0.0


def test_correctness_fraction_without_speed_credit():
    v = verdict(passed_cases=3, gate="correctness", se=4.0)
    assert reward(v) == pytest.approx(0.5 * 3 / 5)


def test_log_speed_scale_between_075_and_4():
    cfg = RewardConfig()
    assert speed_score(0.75, cfg) == 0.0
    assert speed_score(0.5, cfg) == 0.0
    assert speed_score(4.0, cfg) == 1.0
    assert speed_score(8.0, cfg) == 1.0
    assert speed_score(math.sqrt(0.75 * 4.0), cfg) == pytest.approx(0.5)
    assert reward(verdict(se=4.0)) == pytest.approx(1.0)
    assert reward(verdict(se=1.0)) == pytest.approx(0.5 + 0.5 * math.log(1 / 0.75) / math.log(4 / 0.75))


def test_no_speed_credit_when_unstable_or_flagged():
    assert reward(verdict(gate="timing", se=4.0)) == pytest.approx(0.5)
    steady = verdict(se=4.0)
    cpu_unstable = replace(steady, timings={**steady.timings, "candidate": Timing(1.0, 0.5, 10, False, "host")})
    assert reward(cpu_unstable) == pytest.approx(0.5)
    assert reward(verdict(se=20.0, flagged=True)) == pytest.approx(0.5)
    assert reward(verdict(se=20.0, flagged=True), RewardConfig(reward_flagged=True)) == pytest.approx(1.0)


def test_baselines_eager_compile_joint():
    v = verdict(se=0.8, sc=3.0)  # slower than eager-ish, much faster than torch.compile
    eager = reward(v, RewardConfig(baseline="eager"))
    comp = reward(v, RewardConfig(baseline="compile"))
    joint = reward(v, RewardConfig(baseline="joint"))
    assert comp > eager
    assert joint == pytest.approx(eager)  # joint = min: never paid for beating only torch.compile
    with pytest.raises(ValueError):
        RewardConfig(baseline="fastest")


def test_churn_penalty():
    v = verdict(se=4.0)
    assert reward(v, submissions=1) == pytest.approx(1.0)
    assert reward(v, submissions=2) == pytest.approx(0.95)
    assert reward(v, submissions=10) == pytest.approx(0.85)


def test_group_partial_credit_only_when_all_fail_and_below_verified():
    failing = [verdict(passed_cases=k, loose_cases=5, gate="correctness") for k in (0, 2, 4)]
    plain = [reward(v) for v in failing]
    grouped = group_rewards(failing)
    assert all(g == pytest.approx(p + 0.05) for g, p in zip(grouped, plain))
    assert max(grouped) < reward(verdict(se=0.1))  # the slowest verified answer still scores more
    mixed = failing + [verdict(se=2.0)]
    assert group_rewards(mixed) == [reward(v) for v in mixed]
    assert loose_credit(verdict(gate="compile")) == 0.0


def test_a_failure_no_hidden_case_shows_scores_zero():
    """Class 9 of the verifier's second version: an answer right on every hidden case but wrong in its
    timed runs (or caught by a tripwire) is a cheat, not a partly correct answer. The verifier reports
    it as isolation (hard); a stored verdict saying correctness with all cases passed scores 0 too."""
    timed_mismatch = replace(verdict(gate="isolation"),
                             reason="timed runs: the output of timed run 3 is wrong for its inputs")
    assert reward(timed_mismatch) == 0.0
    old_style = verdict(gate="correctness", se=4.0)
    assert old_style.fraction_passed == 1.0
    assert reward(old_style) == 0.0
    assert loose_credit(old_style) == 0.0
    # ...and its group does not count as one where an answer passed every case
    group = [old_style, verdict(passed_cases=2, gate="correctness")]
    assert group_rewards(group) == [0.0, pytest.approx(0.5 * 2 / 5 + 0.05)]
    # a correctness failure on the hidden cases keeps its partial credit
    assert reward(verdict(passed_cases=4, gate="correctness")) == pytest.approx(0.4)


def test_timing_tripwires_are_hard_but_unstable_timing_is_not():
    """Timer tampering and hidden work are tripwires (isolation, 0); run-to-run variation alone is the
    soft timing gate (correctness share, no speed)."""
    assert reward(verdict(gate="isolation", se=4.0)) == 0.0
    assert reward(verdict(gate="timing", se=4.0)) == pytest.approx(0.5)


def test_partial_credit_needs_the_nominal_case():
    """Issue 29: the other cases vary the nominal one; alone, one can leave the operation nearly
    trivial (a Taylor polynomial right on x0.01), so without the nominal case no share is paid."""
    names = ["nominal", "x3", "x0.01", "negated", "abs", "shifted"]
    def v(passed, loose):
        return Verdict(passed=False, gate="correctness",
                       cases=[CaseResult(n, n in passed, 0.0, 0.0, n in loose) for n in names])
    assert reward(v({"x0.01"}, {"x0.01"})) == 0.0
    assert reward(v({"x3", "x0.01", "negated", "abs", "shifted"}, set(names))) == 0.0
    assert reward(v({"nominal", "x3"}, set())) == pytest.approx(0.5 * 2 / 6)
    assert loose_credit(v(set(), set(names) - {"nominal"})) == 0.0  # loose credit: nominal within 1e-2
    assert loose_credit(v(set(), {"nominal"})) == pytest.approx(0.05 / 6)
    # cases named otherwise (older rows, tests): the first is the nominal one (the verifier's order)
    assert reward(verdict(passed_cases=3, gate="correctness")) == pytest.approx(0.5 * 3 / 5)


def test_a_speedup_that_is_not_finite_earns_no_speed_credit():
    """Red team 2026-12-07: an infinite speedup was clipped to full speed credit (paid where flagged
    speedups are, `reward_flagged`); NaN earned none only by `max`'s argument order. The honest edge: a
    finite 10x speedup, flagged and paid under `reward_flagged`, keeps its credit."""
    cfg = RewardConfig(reward_flagged=True)
    for bad in (math.inf, math.nan, -math.inf):
        assert speed_score(bad, cfg) == 0.0
        assert reward(verdict(se=bad, flagged=True), cfg) == pytest.approx(0.5)
    assert reward(verdict(se=10.0, flagged=True), cfg) == pytest.approx(1.0)
