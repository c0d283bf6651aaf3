"""Verdict -> reward, and the group-level post-processing of the study's gym.

    R = 0                                             if a hard gate failed (policy, compile, launch,
                                                      isolation, timeout, crash)
    R = 0                                             if correctness failed with every hidden case
                                                      passed (see `unwatched_failure`)
    R = w_c * c + w_s * s * [c = 1 and stable and not flagged] - churn

    c = fraction of the hidden cases passed (strict 1e-4 tolerance), 0 unless the nominal case passed
        (`nominal_passed`: a Taylor polynomial right only on the x0.01 case earns nothing)
    v = speedup against the chosen baseline: eager, compile, or joint = min(v_eager, v_compile)
        (joint never pays for being slower than eager: the study's lesson 6.1)
    s = clip(log(v / v_lo) / log(v_hi / v_lo), 0, 1)  with v_lo = 0.75, v_hi = 4   (log scale)
    churn = churn_per_submission * (submissions - 1), at most churn_max (multi-turn episodes)

Group post-processing (`group_rewards`): when no answer of a group passes every case, each answer
gets loose-tolerance (1e-2) partial credit w_loose * c_loose on top (0 unless the nominal case is
within 1e-2), which stays below the reward of
any verified answer (w_c = 0.5 > 0.4 + 0.05). A reward is never negative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kgym.contract import Baseline, Gate, Verdict
from kgym.contract.verdict import usable_baseline
from kgym.settings import internal, option

BASELINES = tuple(Baseline)


@dataclass(frozen=True)
class RewardConfig:
    """How a verdict is scored (the formula above). `baseline` is a setting of the RL job's [episodes]; the
    weights and bounds are the study's, set here (the farm's record rows score with the same defaults)."""

    baseline: Baseline = option(Baseline.EAGER, "speed baseline of the reward: eager (lesson 8.1, KernelBench's), "
                                "joint (min of eager and compile), compile (the study's original, not recommended)")
    correctness_weight: float = internal(0.5, "w_c: weight of the share of hidden cases passed")
    speed_weight: float = internal(0.5, "w_s: weight of the speed credit")
    speed_floor: float = internal(0.75, "v_lo: the speedup with zero speed credit")
    speed_cap: float = internal(4.0, "v_hi: the speedup with full speed credit")
    reward_flagged: bool = internal(False, "speed credit for speedups > 10x (suspicious until reviewed)")
    loose_weight: float = internal(0.05, "w_loose: partial credit at 1e-2 when no answer of a group passes "
                                   "every case")
    churn_per_submission: float = internal(0.05, "taken off per repair submission after the first")
    churn_max: float = internal(0.15, "at most this much churn")

    @property
    def reads_compile(self) -> bool:
        """The reward reads the torch.compile figure (compile or joint): a verdict must wait for it."""
        return self.baseline is not Baseline.EAGER

    def __post_init__(self) -> None:
        if self.baseline not in BASELINES:
            raise ValueError(f"baseline must be one of {', '.join(BASELINES)}, not {self.baseline!r}")
        object.__setattr__(self, "baseline", Baseline(self.baseline))
        if not 0 < self.speed_floor < self.speed_cap:
            raise ValueError("need 0 < speed_floor < speed_cap")


def speedup_for(verdict: Verdict, baseline: str) -> float | None:
    if baseline == "eager":
        return verdict.speedup_eager
    if baseline == "compile":
        return verdict.speedup_compile
    known = [v for v in (verdict.speedup_eager, verdict.speedup_compile) if v is not None]
    return min(known) if len(known) == 2 else None


def baselines_stable(verdict: Verdict, baseline: str) -> bool:
    """Speed is paid only against usable baselines (issue 29, `kgym.contract.verdict.usable_baseline`): an
    unstable one (spread over the variation gate, or over its median) can be skewed by whatever ran
    beside it. A baseline the verdict does not hold leaves its speedup None (no credit either way); rows
    rebuilt from records read an unstable baseline back from its note (`verdict_from_record`)."""
    kinds = ("eager", "compile") if baseline == "joint" else (baseline,)
    return all(t is None or usable_baseline(t) for t in (verdict.timings.get(k) for k in kinds))


def speed_score(v: float | None, cfg: RewardConfig) -> float:
    """The speed credit s of speedup `v`. A speedup that is not a finite positive number earns none: an
    infinite one (a candidate time of ~0, or a baseline of inf) was clipped to full credit, NaN slipped
    through `max`'s comparison only by argument order (red team, 2026-12-07)."""
    if v is None or not math.isfinite(v) or v <= 0:
        return 0.0
    s = math.log(v / cfg.speed_floor) / math.log(cfg.speed_cap / cfg.speed_floor)
    return min(1.0, max(0.0, s))


def churn_penalty(submissions: int, cfg: RewardConfig) -> float:
    return min(cfg.churn_max, cfg.churn_per_submission * max(0, submissions - 1))


def unwatched_failure(verdict: Verdict) -> bool:
    """A correctness failure that no hidden case shows: the answer was right while watched and wrong
    elsewhere (the timed runs, a tripwire). The verifier reports those as `isolation`; a verdict
    that says `correctness` with every case passed (an older verifier, a stored row) is scored the
    same way, so the correctness share never pays an answer that behaves differently when timed."""
    return verdict.gate == Gate.CORRECTNESS and bool(verdict.cases) and verdict.fraction_passed == 1.0


def _nominal(verdict: Verdict):
    """The nominal case: the one named so, else the first (the verifier runs it first)."""
    return next((c for c in verdict.cases if c.name == "nominal"), verdict.cases[0] if verdict.cases else None)


def nominal_passed(verdict: Verdict, loose: bool = False) -> bool:
    """Partial credit needs the nominal case (issue 29): the other cases are variations of it, and one
    alone can leave the operation nearly trivial (x0.01: a low-order Taylor polynomial of GELU or tanh
    passes it; abs: ReLU is the identity). An answer wrong on the task's own inputs earns no share."""
    nominal = _nominal(verdict)
    return nominal is not None and bool(nominal.passed_loose if loose else nominal.passed)


def reward(verdict: Verdict, cfg: RewardConfig = RewardConfig(), submissions: int = 1) -> float:
    if verdict.hard_failure or unwatched_failure(verdict):
        return 0.0
    c = verdict.fraction_passed if nominal_passed(verdict) else 0.0
    cand = verdict.timings.get("candidate")
    stable = cand is not None and cand.stable
    speed_ok = (c == 1.0 and verdict.gate is None and stable and baselines_stable(verdict, cfg.baseline)
                and (cfg.reward_flagged or not verdict.flagged))
    s = speed_score(speedup_for(verdict, cfg.baseline), cfg) if speed_ok else 0.0
    r = cfg.correctness_weight * c + cfg.speed_weight * s - churn_penalty(submissions, cfg)
    return max(0.0, r)


def loose_credit(verdict: Verdict, cfg: RewardConfig = RewardConfig()) -> float:
    if verdict.hard_failure or unwatched_failure(verdict) or not nominal_passed(verdict, loose=True):
        return 0.0
    return cfg.loose_weight * sum(1 for c in verdict.cases if c.passed_loose) / len(verdict.cases)


def group_rewards(verdicts: Sequence[Verdict], cfg: RewardConfig = RewardConfig(),
                  submissions: Sequence[int] | None = None) -> list[float]:
    """Rewards of a group of answers to one task, with loose partial credit when all of them fail."""
    subs = submissions or [1] * len(verdicts)
    base = [reward(v, cfg, n) for v, n in zip(verdicts, subs)]
    if any(v.cases and v.fraction_passed == 1.0 and not v.hard_failure and not unwatched_failure(v)
           for v in verdicts):
        return base
    return [b + loose_credit(v, cfg) for b, v in zip(base, verdicts)]


def uniform(rewards: Sequence[float], tol: float = 1e-9) -> bool:
    """Every answer of a group scored the same (within `tol`): group-relative advantages are all zero,
    so the group teaches nothing and the study resampled it."""
    return bool(rewards) and max(rewards) - min(rewards) <= tol
