"""The RL job's Prometheus metrics: names, labels, and updating them from a step's stats row.

Exported by the RL driver itself (it sees every step; one process, so counters never split or reset
per actor) on `[metrics] rl_port` (0: any free port), in its own registry beside the farm sink's
`kgym_*` metrics (`kgym.metrics`). Names follow kgym's conventions: a `kgym_rl_` prefix, base units,
`_total` on counters, `_ratio` for ratios.

    kgym_rl_step                                      gauge: last committed step
    kgym_rl_policy_version                            gauge: the learner's policy version
    kgym_rl_steps_total{status}                       counter: steps by learner status
    kgym_rl_reward                                    gauge: mean reward of the last step's trained groups
    kgym_rl_reward_per_step                           histogram of per-step mean rewards
    kgym_rl_solve_rate_ratio{family, mode}            gauge: solved / episodes of the family and mode in
                                                      the last step that had them (mode single | repair | all)
    kgym_rl_episodes_total{family, mode, outcome}     counter: training episodes, outcome solved |
                                                      unsolved | error
    kgym_rl_entropy                                   gauge: mean token entropy (nats) of the last step
    kgym_rl_kl                                        gauge: mean k3 KL to the reference
    kgym_rl_clip_fraction_ratio                       gauge: share of loss tokens the CISPO bound changed
    kgym_rl_logprob_drift                             gauge: the sampler/learner gap, mean |logp difference|
                                                      per loss token (nats)
    kgym_rl_sampler_kl                                gauge: its k3 estimate of KL(sampler || learner)
    kgym_rl_is_truncated_ratio                        gauge: share of loss tokens whose learner/sampler ratio
                                                      passed the correction cap
    kgym_rl_grad_norm                                 gauge
    kgym_rl_learning_rate                             gauge
    kgym_rl_step_seconds{phase}                       histogram: phase generation | verification |
                                                      learning | sync | checkpoint | eval | step
    kgym_rl_phase_seconds_total{phase}                counter: the same seconds summed (rate() = share)
    kgym_rl_generated_tokens_total                    counter: tokens the engine generated
    kgym_rl_generation_tokens_per_second              gauge: the last step's generation throughput
    kgym_rl_train_tokens_per_second                   gauge: learner tokens / learning seconds
    kgym_rl_staleness_versions                        gauge: the largest staleness of the last batch
    kgym_rl_rollout_overlap_seconds                   gauge: seconds the last step's first rollout ran
                                                      beside the previous step's learner step ([offpolicy]
                                                      overlap; 0 when synchronous)
    kgym_rl_overlap_seconds_total                     counter: the same seconds summed
    kgym_rl_dropped_stale_samples_total               counter: samples dropped by the off-policy bound
    kgym_rl_resampled_groups_total                    counter: all-equal groups replaced by a resample
    kgym_rl_all_equal_groups_kept_total               counter: all-equal groups kept (budget ran out)
    kgym_rl_eval_solve_rate_ratio                     gauge: the last held-out evaluation's solve rate
    kgym_rl_eval_delta_pp{bound}                      gauge: its delta against the previous one, bound
                                                      estimate | low | high (95% paired bootstrap)

Does not decide what Grafana shows (the dashboard's RL row uses only these names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from kgym.contract.rl_step import StepRow

PHASES = ("generation", "verification", "learning", "sleep", "wake", "sync", "checkpoint", "eval", "step")
MODES = ("single", "repair", "all")
OUTCOMES = ("solved", "unsolved", "error")
# A step is seconds on a CPU test and minutes on the study's GPU (28 h / 300 steps = 5.6 min).
STEP_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 3600.0)
REWARD_BUCKETS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

# the stats-row column each phase reads
_PHASE_COLUMN = {"generation": "generation_s", "verification": "verification_s", "learning": "learning_s",
                 "sleep": "sleep_s", "wake": "wake_s", "sync": "sync_s", "checkpoint": "checkpoint_s", "eval": "eval_s",
                 "step": "step_s"}


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if f == f else None  # NaN is not a value to export


class RLMetrics:
    """The RL job's metrics in their own registry (call from the driver's thread)."""

    def __init__(self, registry: CollectorRegistry | None = None):
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.step = Gauge("kgym_rl_step", "Last committed RL step", registry=r)
        self.policy_version = Gauge("kgym_rl_policy_version", "Policy version of the learner", registry=r)
        self.steps = Counter("kgym_rl_steps", "RL steps by learner status", ["status"], registry=r)
        self.step_failures = Counter("kgym_rl_step_failures", "Failed steps (an actor died, a call timed out or "
                                     "raised), each retried from the last checkpoint", registry=r)
        self.reward = Gauge("kgym_rl_reward", "Mean reward of the last step's trained groups", registry=r)
        self.reward_hist = Histogram("kgym_rl_reward_per_step", "Per-step mean reward", buckets=REWARD_BUCKETS,
                                     registry=r)
        self.solve_rate = Gauge("kgym_rl_solve_rate_ratio", "Solved / episodes in the last step that had the "
                                "family and mode (mode all: both)", ["family", "mode"], registry=r)
        self.episodes = Counter("kgym_rl_episodes", "Training episodes by family, mode and outcome",
                                ["family", "mode", "outcome"], registry=r)
        self.entropy = Gauge("kgym_rl_entropy", "Mean token entropy (nats) of the last step", registry=r)
        self.kl = Gauge("kgym_rl_kl", "Mean k3 KL to the reference per loss token", registry=r)
        self.clip_fraction = Gauge("kgym_rl_clip_fraction_ratio", "Share of loss tokens whose CISPO weight the "
                                   "bound changed", registry=r)
        self.grad_norm = Gauge("kgym_rl_grad_norm", "Gradient norm before clipping", registry=r)
        self.drift = Gauge("kgym_rl_logprob_drift", "Mean |sampler - learner| log-prob per loss token (nats)",
                           registry=r)
        self.sampler_kl = Gauge("kgym_rl_sampler_kl", "k3 estimate of KL(sampler || learner) per loss token",
                                registry=r)
        self.is_truncated = Gauge("kgym_rl_is_truncated_ratio", "Share of loss tokens whose learner/sampler "
                                  "ratio passed the correction cap", registry=r)
        self.lr = Gauge("kgym_rl_learning_rate", "Learning rate of the last step", registry=r)
        self.step_seconds = Histogram("kgym_rl_step_seconds", "Seconds of an RL step by phase", ["phase"],
                                      buckets=STEP_BUCKETS, registry=r)
        self.phase_seconds = Counter("kgym_rl_phase_seconds", "Seconds spent per phase, summed", ["phase"],
                                     registry=r)
        self.generated_tokens = Counter("kgym_rl_generated_tokens", "Tokens generated by the engine", registry=r)
        self.gen_tps = Gauge("kgym_rl_generation_tokens_per_second", "Generation throughput of the last step",
                             registry=r)
        self.train_tps = Gauge("kgym_rl_train_tokens_per_second", "Learner tokens per learning second", registry=r)
        self.staleness = Gauge("kgym_rl_staleness_versions", "Largest staleness (policy versions) in the last batch",
                               registry=r)
        self.overlap = Gauge("kgym_rl_rollout_overlap_seconds", "Seconds the last step's first rollout ran "
                             "beside the previous step's learner step (0: synchronous)", registry=r)
        self.overlap_total = Counter("kgym_rl_overlap_seconds", "Seconds rollouts ran beside a learner "
                                     "step, summed", registry=r)
        self.dropped_stale = Counter("kgym_rl_dropped_stale_samples", "Samples dropped by the off-policy bound",
                                     registry=r)
        self.resampled = Counter("kgym_rl_resampled_groups", "All-equal groups replaced by a resample", registry=r)
        self.all_equal_kept = Counter("kgym_rl_all_equal_groups_kept", "All-equal groups kept (resample budget "
                                      "spent)", registry=r)
        self.eval_solve_rate = Gauge("kgym_rl_eval_solve_rate_ratio", "Solve rate of the last held-out evaluation",
                                     registry=r)
        self.eval_delta = Gauge("kgym_rl_eval_delta_pp", "Delta of the last evaluation against the previous one "
                                "(percentage points) and its 95% paired-bootstrap bounds", ["bound"], registry=r)
        for phase in PHASES:  # every series from 0, so the first step counts in rate() and increase()
            self.step_seconds.labels(phase=phase)
            self.phase_seconds.labels(phase=phase)

    def declare(self, families: Iterable[str]) -> None:
        """Create the families' series at 0 before the first step (see kgym.metrics.declare: why)."""
        for family in families:
            for mode in MODES[:2]:
                for outcome in OUTCOMES:
                    self.episodes.labels(family=family, mode=mode, outcome=outcome)

    def observe_step(self, step: StepRow, episodes: Iterable[Mapping[str, Any]]) -> None:
        """A committed step: its row (`kgym.contract.rl_step.StepRow`) and its trained-or-not training
        episode rows (`ROLLOUT_COLUMNS`; resampled groups are counted too, not solve rates of them)."""
        stats = step.to_row()
        self.step.set(stats["step"])
        self.policy_version.set(stats["version_after"])
        self.steps.labels(status=str(stats["status"])).inc()
        for name, gauge in (("reward_mean", self.reward), ("entropy", self.entropy), ("kl", self.kl),
                            ("clip_fraction", self.clip_fraction), ("grad_norm", self.grad_norm), ("lr", self.lr),
                            ("generation_tokens_per_s", self.gen_tps), ("logprob_drift", self.drift),
                            ("sampler_kl", self.sampler_kl), ("is_truncated_fraction", self.is_truncated)):
            v = _num(stats.get(name))
            if v is not None:
                gauge.set(v)
        r = _num(stats.get("reward_mean"))
        if r is not None:
            self.reward_hist.observe(r)
        for phase, col in _PHASE_COLUMN.items():
            v = _num(stats.get(col)) or 0.0
            self.step_seconds.labels(phase=phase).observe(v)
            self.phase_seconds.labels(phase=phase).inc(v)
        learn = _num(stats.get("learning_s"))
        if learn:
            self.train_tps.set(float(stats.get("train_tokens") or 0) / learn)
        self.generated_tokens.inc(float(stats.get("generated_tokens") or 0))
        self.staleness.set(_num(stats.get("staleness_max")) or 0.0)
        self.dropped_stale.inc(int(stats.get("dropped_stale") or 0))
        self.resampled.inc(int(stats.get("groups_resampled") or 0))
        self.all_equal_kept.inc(int(stats.get("groups_all_equal_kept") or 0))
        tally: dict[tuple[str, str], list[int]] = {}
        for e in episodes:
            family, mode = str(e["family"]), str(e["mode"])
            outcome = "error" if e.get("error") else ("solved" if e.get("solved") else "unsolved")
            self.episodes.labels(family=family, mode=mode, outcome=outcome).inc()
            if outcome == "error" or e.get("group_resampled"):
                continue
            for key in ((family, mode), (family, "all")):
                t = tally.setdefault(key, [0, 0])
                t[0] += int(bool(e.get("solved")))
                t[1] += 1
        for (family, mode), (solved, n) in tally.items():
            self.solve_rate.labels(family=family, mode=mode).set(solved / n)

    def observe_overlap(self, seconds: float) -> None:
        """A committed step's overlap: its first rollout's seconds beside the previous learner step
        (not a step-row column: the row's schema is pinned; the driver's log line has it too)."""
        self.overlap.set(seconds)
        self.overlap_total.inc(seconds)

    def observe_eval(self, row: Mapping[str, Any]) -> None:
        self.eval_solve_rate.set(float(row["solve_rate"]))
        for bound, col in (("estimate", "delta_pp"), ("low", "ci95_low_pp"), ("high", "ci95_high_pp")):
            v = _num(row.get(col))
            if v is not None:
                self.eval_delta.labels(bound=bound).set(v)


def metric_names() -> list[str]:
    """Every metric family this module defines (what a scrape shows, suffixes aside)."""
    return sorted(m.name for m in RLMetrics().registry.collect())
