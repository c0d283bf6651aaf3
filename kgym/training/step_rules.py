"""The RL job's step logic on plain values: scoring groups, which groups to resample, the off-policy
bound, the learner batch, the held-out set and its paired bootstrap, and the records' rows.

Every function here takes and returns data (episode rollouts, group results, samples, rows), so the
job's rules are tested without a model, an engine or Ray (tests/rljob/). The driver (`jobs/rl.py`)
calls them in the order its docstring gives. Imports kgym (no torch at import, no Ray, no vLLM).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kgym.bootstrap import BootstrapResult, paired_bootstrap
from kgym.contract import Mode
from kgym.episodes.flatten import FlattenKind, flatten_episode
from kgym.episodes.group import GroupConfig, GroupResult, score_group
from kgym.rl.batch import Sample


# -- groups ---------------------------------------------------------------------------------------
@dataclass
class ScoredGroup:
    """One group of a step: its rollout, its scoring (None when no episode ran to an end), and what
    the step did with it."""

    rollout: Any  # kgym.rollout.driver.GroupRollout
    task: Any  # kgym.tasks.Task
    round: int  # 0: the step's first draw; k: the k-th resampling round
    result: GroupResult | None
    resampled: bool = False  # replaced by a group of a later round

    @property
    def all_equal(self) -> bool:
        return self.result is None or self.result.all_equal


def score(rollout: Any, task: Any, round_: int, group_size: int) -> ScoredGroup:
    """`kgym.episodes.score_group` over the episodes that ran to an end (errors are never scored)."""
    results = rollout.results
    if not results:
        return ScoredGroup(rollout, task, round_, None)
    return ScoredGroup(rollout, task, round_, score_group(results, config=GroupConfig(group_size=group_size)))


def to_resample(groups: Sequence[ScoredGroup], round_: int, max_rounds: int) -> list[ScoredGroup]:
    """Groups of round `round_` whose answers all scored the same, while the budget lasts."""
    if round_ >= max_rounds:
        return []
    return [g for g in groups if g.round == round_ and g.all_equal]


# -- the off-policy bound and the batch -----------------------------------------------------------
@dataclass
class Batch:
    samples: list[Sample] = field(default_factory=list)
    dropped_stale: int = 0  # samples dropped by the off-policy bound
    stale_episodes: set[str] = field(default_factory=set)  # their episode ids
    trained_episodes: set[str] = field(default_factory=set)
    flatten: dict[str, tuple[FlattenKind, int, Sample | None]] = field(default_factory=dict)
    staleness_max: int | None = None


def within_bound(sample_version: int, learner_version: int, max_staleness: int) -> bool:
    """A sample may be trained on when it is at most `max_staleness` versions behind the learner."""
    return learner_version - sample_version <= max_staleness


def build_batch(groups: Sequence[ScoredGroup], learner_version: int, max_staleness: int) -> Batch:
    """The learner samples of every group that is not resampled, each episode flattened once
    (`kgym.episodes.flatten_episode`), samples beyond the off-policy bound dropped and counted.
    Samples of one episode share its id, so the group's advantages count the episode once."""
    out = Batch()
    for g in groups:
        if g.result is None:
            continue
        for e in g.result.episodes:
            eid = f"{e.group_id}-{e.sample_index}"
            flat = flatten_episode(e)
            samples = [_with_episode(s, eid) for s in flat.samples]
            out.flatten[eid] = (flat.kind, len(samples), samples[0] if samples else None)
            if g.resampled or not samples:
                continue
            fresh = [s for s in samples if within_bound(s.policy_version, learner_version, max_staleness)]
            if len(fresh) < len(samples):  # one stale turn makes the whole episode stale: drop it whole
                out.dropped_stale += len(samples)
                out.stale_episodes.add(eid)
                continue
            out.samples.extend(fresh)
            out.trained_episodes.add(eid)
            for s in fresh:
                lag = learner_version - s.policy_version
                out.staleness_max = lag if out.staleness_max is None else max(out.staleness_max, lag)
    return out


def _with_episode(s: Sample, episode_id: str) -> Sample:
    import dataclasses

    return dataclasses.replace(s, episode_id=episode_id)


# -- the held-out evaluation ----------------------------------------------------------------------
def held_out_specs(task_ids: Sequence[str], n: int, seed: int) -> list[tuple[str, int]]:
    """`n` (task id, seed) pairs, round-robin over `task_ids`, seeds from a namespace of their own
    (the curriculum draws 63-bit seeds from another stream: a collision has probability ~n / 2^63)."""
    if not task_ids:
        raise ValueError("the held-out set has no task to draw from (eval.families and the curriculum's exclude "
                         "leave none)")
    rng = random.Random(f"kgym/rl-heldout/{seed}")
    order = list(task_ids)
    rng.shuffle(order)
    return [(order[i % len(order)], rng.getrandbits(63)) for i in range(n)]


@dataclass(frozen=True)
class EvalScore:
    keys: tuple[str, ...]  # one per task, in order
    per_task: tuple[float, ...]  # share of the task's samples solved
    per_pass: tuple[float, ...]  # solve rate of each sample pass (sample index k over all tasks)
    reward_mean: float

    @property
    def solve_rate(self) -> float:
        return float(np.mean(self.per_task)) if self.per_task else 0.0

    @property
    def pass_std(self) -> float:
        return float(np.std(self.per_pass, ddof=1)) if len(self.per_pass) > 1 else 0.0


def eval_score(keys: Sequence[str], solved: Sequence[Sequence[bool]], rewards: Iterable[float]) -> EvalScore:
    """Multi-sample scoring: `solved[i][k]` is sample k of task i (a failed generation counts unsolved)."""
    if len(keys) != len(solved):
        raise ValueError("one key per task")
    k = max((len(s) for s in solved), default=0)
    per_task = tuple(float(np.mean(s)) if len(s) else 0.0 for s in solved)
    per_pass = tuple(float(np.mean([s[j] for s in solved if j < len(s)])) for j in range(k))
    r = list(rewards)
    return EvalScore(tuple(keys), per_task, per_pass, float(np.mean(r)) if r else 0.0)


def compare_evals(previous: EvalScore | None, current: EvalScore, resamples: int) -> BootstrapResult | None:
    """The paired bootstrap against the previous evaluation, on the tasks both scored."""
    if previous is None:
        return None
    if previous.keys != current.keys:
        raise ValueError("the held-out set changed between evaluations; a paired comparison needs the same tasks")
    return paired_bootstrap(previous.per_task, current.per_task, resamples=resamples)


# -- rows -----------------------------------------------------------------------------------------
def _final(e: Any) -> Any:
    return e.final.verdict if e is not None and e.final is not None else None


def _prompt_text(transcript: list[dict[str, Any]]) -> str:
    parts = []
    for m in transcript:
        if m.get("role") == "assistant":
            break
        parts.append(str(m.get("content") or ""))
    return "\n\n".join(parts)


def _completion_text(turns: Sequence[Any]) -> str:
    return "\n\n".join(t.text for t in turns)


def episode_rows(groups: Sequence[ScoredGroup], *, run_id: str, attempt: int, step: int, kind: str,
                 learner_version: int, baseline: str, batch: Batch | None = None) -> list[dict[str, Any]]:
    """One `rl_records.ROLLOUT_COLUMNS` row per episode of `groups` (errors included)."""
    rows = []
    for g in groups:
        scored = {e.sample_index: e for e in (g.result.episodes if g.result else [])}
        spec = g.task.spec
        for er in g.rollout.episodes:
            eid = f"{er.group_id}-{er.sample_index}"
            res = scored.get(er.sample_index)
            v = _final(res)
            versions = list(er.policy_versions)
            oldest = min(versions) if versions else None
            kind_, nsamples, first = (batch.flatten.get(eid) if batch else None) or (None, 0, None)
            if first is None and res is not None and batch is None:
                flat = flatten_episode(res)
                kind_, nsamples = flat.kind, len(flat.samples)
                first = flat.samples[0] if flat.samples else None
            transcript = res.transcript if res is not None else []
            rows.append({
                "run_id": run_id, "attempt": attempt, "step": step, "kind": kind, "group_id": er.group_id,
                "sample_index": er.sample_index, "episode_id": eid, "resample_round": g.round,
                "task_id": spec.task_id, "family": spec.family, "operation": spec.operation, "stage": spec.stage,
                "size": spec.size, "task_seed": spec.seed, "answer_mode": spec.answer_mode,
                "task_json": spec.to_json(), "mode": str(Mode(er.mode)), "policy_version": oldest,
                "policy_versions": versions, "learner_version": learner_version,
                "staleness": None if oldest is None else learner_version - oldest,
                "end_reason": None if res is None or res.end_reason is None else str(res.end_reason),
                "error": er.error or (res.error if res is not None else None),
                "turns": len(er.turns), "submissions": res.submissions if res is not None else 0,
                "solved": bool(res is not None and res.solved), "reward": float(res.reward) if res else 0.0,
                "base_reward": float(res.base_reward) if res else 0.0,
                "loose_credit": float(res.loose_credit) if res else 0.0, "baseline": baseline,
                "final_evaluation_id": res.final_evaluation_id if res is not None else None,
                "evaluation_ids": res.evaluation_ids if res is not None else [],
                "final_gate": None if v is None or v.gate is None else str(v.gate),
                "speedup_eager": None if v is None else v.speedup_eager,
                "speedup_compile": None if v is None else v.speedup_compile,
                "library_calls": None if v is None else int(v.library_calls),
                "prompt": _prompt_text(transcript), "completion": _completion_text(er.turns),
                "prompt_ids": list(first.prompt_ids) if first else None,
                "completion_ids": list(first.completion_ids) if first else None,
                "loss_mask": list(first.loss_mask) if first else None,
                "logprobs": list(first.sampler_logprobs) if first and first.sampler_logprobs is not None else None,
                "flatten_kind": None if kind_ is None else str(kind_), "samples": nsamples,
                "completion_tokens": sum(t.completion_tokens for t in er.turns),
                "finish_reasons": [str(t.finish_reason) for t in er.turns],
                "transcript_json": json.dumps(transcript, default=str),
                "group_all_equal": g.all_equal, "group_resampled": g.resampled,
                "trained": bool(batch is not None and eid in batch.trained_episodes),
                "dropped_stale": bool(batch is not None and eid in batch.stale_episodes),
            })
    return rows


def verification_work(groups: Sequence[ScoredGroup]) -> tuple[int, float]:
    """(evaluations, sum of their verifiers' own wall seconds) over the groups' episodes."""
    n, seconds = 0, 0.0
    for g in groups:
        for e in g.rollout.results:
            for ev in e.evaluations:
                n += 1
                seconds += float(sum(ev.verdict.stages_s.values()))
    return n, seconds


def rates(rows: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    """Reward and solve rates over the trained groups' scored episodes (rows of `episode_rows`)."""
    used = [r for r in rows if not r["group_resampled"] and not r["error"]]

    def share(sel: list[dict[str, Any]]) -> float | None:
        return sum(r["solved"] for r in sel) / len(sel) if sel else None

    rewards = [r["reward"] for r in used]
    solved = [r for r in used if r["solved"]]
    return {"reward_mean": float(np.mean(rewards)) if rewards else None,
            "reward_std": float(np.std(rewards)) if rewards else None,
            "solve_rate": share(used), "solve_rate_single": share([r for r in used if r["mode"] == "single"]),
            "solve_rate_repair": share([r for r in used if r["mode"] == "repair"]),
            "hybrid_rate": (sum((r["library_calls"] or 0) > 0 for r in solved) / len(solved)) if solved else None}


def finite(v: Any) -> float | None:
    """A float for a stats column, None for NaN / missing."""
    if v is None:
        return None
    f = float(v)
    return f if math.isfinite(f) else None
