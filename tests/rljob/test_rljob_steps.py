"""The RL job's step rules on plain values (no model, no engine, no Ray): resampling of groups whose
answers all scored the same (bounded), the off-policy bound (dropped and counted), the learner batch,
the held-out set, multi-sample scoring and the paired bootstrap, and the rollout rows."""

from __future__ import annotations

import numpy as np
import pytest

from kgym.contract import CaseResult, EndReason, Mode, Verdict
from kgym.episodes.result import EpisodeResult, Evaluation
from kgym.episodes.turn_tokens import TurnSample
from kgym.kernelbench.comparison import paired_bootstrap as kb_bootstrap
from kgym.rollout.driver import EpisodeRollout, GroupRollout, TurnRecord
from kgym.rollout.engine import FinishReason
from kgym.tasks import make
from kgym.training import step_rules as rl_steps

TASK = make("relu-v1", 3, size="tiny")


def verdict(cases_passed: int, total: int = 5) -> Verdict:
    cases = [CaseResult(f"c{i}", i < cases_passed, passed_loose=i < cases_passed) for i in range(total)]
    return Verdict(passed=cases_passed == total, gate=None if cases_passed == total else "correctness",
                   cases=cases, stages_s={"cases": 0.5})


def episode(group: str, k: int, cases_passed: int | None, version: int = 0, error: str | None = None) -> EpisodeRollout:
    from kgym.reward import reward

    evs, base, final = [], 0.0, None
    if cases_passed is not None:
        v = verdict(cases_passed)
        base = reward(v)
        final = f"ev-{group}-{k}"
        evs = [Evaluation(final, 1, 1, "code", v, base)]
    res = EpisodeResult(episode_id=f"{group}-{k}", group_id=group, sample_index=k, task_id=TASK.task_id,
                        task=TASK.spec.to_dict(), mode=Mode.SINGLE, end_reason=EndReason.ANSWERED, turns=1,
                        submissions=1 if evs else 0, evaluations=evs, final_evaluation_id=final, base_reward=base,
                        reward=base, error=error,
                        transcript=[{"role": "user", "content": "write relu"}, {"role": "assistant", "content": "x"}],
                        turn_samples=[TurnSample((1, 2, 3), (4, 5), (-0.5, -0.25), policy_version=version)])
    turn = TurnRecord(1, "x", 3, 2, FinishReason.STOP, version, None, 0, (), True, 0.1)
    return EpisodeRollout(TASK.task_id, group, k, Mode.SINGLE, res, (turn,))


def group(gid: str, passes: list[int | None], versions: list[int] | None = None) -> GroupRollout:
    versions = versions or [0] * len(passes)
    return GroupRollout(gid, TASK.task_id, Mode.SINGLE,
                        tuple(episode(gid, k, p, v) for k, (p, v) in enumerate(zip(passes, versions))))


def test_all_equal_groups_are_resampled_within_the_budget():
    mixed = rl_steps.score(group("g0", [5, 0, 2, 5]), TASK, 0, 4)
    flat = rl_steps.score(group("g1", [0, 0, 0, 0]), TASK, 0, 4)
    assert not mixed.all_equal and flat.all_equal
    assert rl_steps.to_resample([mixed, flat], 0, max_rounds=2) == [flat]
    flat2 = rl_steps.score(group("g2", [5, 5, 5, 5]), TASK, 1, 4)  # all solved: also no signal
    assert flat2.all_equal
    assert rl_steps.to_resample([flat2], 1, max_rounds=2) == [flat2]
    assert rl_steps.to_resample([flat2], 2, max_rounds=2) == []  # budget spent: kept
    assert rl_steps.to_resample([flat], 0, max_rounds=0) == []


def test_resampled_groups_are_recorded_but_never_trained_on():
    flat = rl_steps.score(group("g1", [0, 0, 0, 0]), TASK, 0, 4)
    flat.resampled = True
    fresh = rl_steps.score(group("g1r", [5, 0, 0, 1]), TASK, 1, 4)
    batch = rl_steps.build_batch([flat, fresh], learner_version=0, max_staleness=1)
    assert len(batch.samples) == 4 and {s.group_id for s in batch.samples} == {"g1r"}
    rows = rl_steps.episode_rows([flat, fresh], run_id="r", attempt=1, step=1, kind="train", learner_version=0,
                                 baseline="eager", batch=batch)
    assert len(rows) == 8
    assert [r["trained"] for r in rows] == [False] * 4 + [True] * 4
    assert all(r["group_resampled"] for r in rows[:4]) and rows[4]["resample_round"] == 1
    assert rl_steps.rates(rows)["solve_rate"] == 0.25  # over the trained group only


def test_stale_samples_are_dropped_and_counted():
    g = rl_steps.score(group("g0", [5, 0, 2, 1], versions=[3, 2, 1, 0]), TASK, 0, 4)
    batch = rl_steps.build_batch([g], learner_version=3, max_staleness=1)
    assert sorted(s.policy_version for s in batch.samples) == [2, 3]
    assert batch.dropped_stale == 2 and batch.stale_episodes == {"g0-2", "g0-3"}
    assert batch.staleness_max == 1
    rows = rl_steps.episode_rows([g], run_id="r", attempt=1, step=1, kind="train", learner_version=3,
                                 baseline="eager", batch=batch)
    assert [r["dropped_stale"] for r in rows] == [False, False, True, True]
    assert [r["staleness"] for r in rows] == [0, 1, 2, 3]
    assert rl_steps.build_batch([g], learner_version=3, max_staleness=3).dropped_stale == 0
    assert rl_steps.build_batch([g], learner_version=3, max_staleness=0).dropped_stale == 3


def test_errors_are_never_trained_on_and_samples_carry_their_episode():
    rollout = group("g0", [5, 0, None])
    broken = EpisodeRollout(TASK.task_id, "g0", 3, Mode.SINGLE, None, (), error="generation failed on turn 1")
    rollout = GroupRollout("g0", TASK.task_id, Mode.SINGLE, rollout.episodes + (broken,))
    g = rl_steps.score(rollout, TASK, 0, 4)
    batch = rl_steps.build_batch([g], 0, 1)
    assert len(batch.samples) == 3 and {s.episode_id for s in batch.samples} == {"g0-0", "g0-1", "g0-2"}
    rows = rl_steps.episode_rows([g], run_id="r", attempt=1, step=1, kind="train", learner_version=0,
                                 baseline="eager", batch=batch)
    assert rows[3]["error"].startswith("generation failed") and not rows[3]["trained"]
    assert rows[0]["prompt"] == "write relu" and rows[0]["completion_ids"] == [4, 5]
    assert rows[0]["logprobs"] == [-0.5, -0.25] and rows[0]["solved"] and rows[0]["final_gate"] is None
    assert rows[1]["final_gate"] == "correctness" and rows[2]["final_evaluation_id"] is None
    assert rl_steps.verification_work([g]) == (2, 1.0)  # two evaluations of 0.5 s each


def test_held_out_set_is_fixed_and_round_robin():
    ids = ["relu-v1", "gelu-v1", "tanh-v1"]
    a = rl_steps.held_out_specs(ids, 7, seed=5)
    assert a == rl_steps.held_out_specs(ids, 7, seed=5) and a != rl_steps.held_out_specs(ids, 7, seed=6)
    assert {t for t, _ in a} == set(ids) and len({s for _, s in a}) == 7
    with pytest.raises(ValueError, match="no task"):
        rl_steps.held_out_specs([], 3, 0)


def test_multi_sample_score():
    s = rl_steps.eval_score(["a", "b", "c"], [[True, False, True], [False, False, False], [True, True, True]],
                            [1.0, 0.0, 0.5])
    assert s.per_task == pytest.approx((2 / 3, 0.0, 1.0)) and s.solve_rate == pytest.approx(5 / 9)
    assert s.per_pass == pytest.approx((2 / 3, 1 / 3, 2 / 3)) and s.pass_std > 0
    assert s.reward_mean == pytest.approx(0.5)


def test_paired_bootstrap_matches_kernelbench_on_single_samples_and_pairs_tasks():
    rng = np.random.default_rng(0)
    a = rng.random(60) < 0.4
    b = a.copy()
    b[:8] = True  # gains on 8 tasks, some already solved
    b[50:52] = False
    ours = rl_steps.paired_bootstrap(a.astype(float), b.astype(float), resamples=20000)
    ref = kb_bootstrap(list(a), list(b), resamples=20000)
    assert ours.delta_pp == pytest.approx(ref.delta_pp)
    assert (ours.gained, ours.lost) == (ref.gained, ref.lost)
    assert ours.ci95_pp[0] == pytest.approx(ref.ci95_pp[0], abs=1.0)
    assert ours.ci95_pp[1] == pytest.approx(ref.ci95_pp[1], abs=1.0)
    # pairing: the same shift on every task is certain, whatever the spread between tasks
    base = rng.random(30)
    same = rl_steps.paired_bootstrap(base, base + 0.1, resamples=2000)
    assert same.ci95_pp == pytest.approx((10.0, 10.0)) and same.gained == 30
    with pytest.raises(ValueError):
        rl_steps.paired_bootstrap([0.1], [0.1, 0.2])


def test_compare_needs_the_same_tasks():
    prev = rl_steps.eval_score(["a", "b"], [[True], [False]], [])
    cur = rl_steps.eval_score(["a", "b"], [[True], [True]], [])
    assert rl_steps.compare_evals(None, cur, 100) is None
    assert rl_steps.compare_evals(prev, cur, 1000).delta_pp == pytest.approx(50.0)
    with pytest.raises(ValueError, match="held-out set changed"):
        rl_steps.compare_evals(prev, rl_steps.eval_score(["a", "c"], [[True], [True]], []), 100)
