"""Single-turn episodes and groups through the real verifier (CPU interpreter, tiny relu-v1)."""

import pytest

from kgym.episodes import GroupConfig, KernelEnv, rollout_group, score_group
from kgym.reward import RewardConfig, loose_credit, reward

from episodes_helpers import fenced, run


def answers(*texts):
    return [(lambda conversation, t=t: t) for t in texts]


def test_single_turn_prompt_and_answer(evaluator, relu):
    env = KernelEnv(evaluator)
    opening = run(env.reset(relu, "single", episode_id="s1"))
    assert opening == [{"role": "user", "content": relu.prompt()}]
    text = fenced(relu.wrong) + "\nOn second thought:\n" + fenced(relu.solution)  # the last block wins
    s = run(env.step({"role": "assistant", "content": text}))
    r = env.result()
    assert s.terminated and not s.truncated and env.done
    assert r.end_reason == "answered" and r.turns == 1 and r.submissions == 1
    assert r.final.candidate == relu.solution.rstrip() + "\n" and r.solved
    assert s.reward == r.reward == reward(r.final.verdict, RewardConfig()) > 0


@pytest.mark.parametrize("text, end, cut", [("I would use tl.maximum.", "no_code", False),
                                            ("```python\nimport triton\n@triton.jit\ndef k(", "truncated", True)])
def test_single_turn_without_usable_code_scores_zero_unverified(evaluator, relu, text, end, cut):
    env = KernelEnv(evaluator)
    run(env.reset(relu, "single"))
    before = evaluator.verified
    s = run(env.step(text))
    r = env.result()
    assert (s.terminated, s.truncated) == (not cut, cut)  # a cut-off answer is truncated by the length limit
    assert s.reward == 0.0 and r.end_reason == end and r.evaluations == [] and r.reason
    assert evaluator.verified == before


def _nearly_right(relu) -> str:
    """ReLU that zeroes 0 < x <= 1e-5: right at unit scale (nominal), wrong on x0.01 within 1e-2."""
    near = relu.solution.replace("y = tl.maximum(x, 0.0)", "y = tl.where(x > 1e-5, x, 0.0)")
    assert near != relu.solution
    return near


def test_a_group_where_all_fail_gets_loose_credit(evaluator, relu):
    eps = run(rollout_group(evaluator, relu, answers(*[fenced(_nearly_right(relu))] * 4 + ["no code here"] * 4),
                            "single", "g-fail"))
    g = score_group(eps)
    assert g.loose_applied and not g.all_equal and not g.resample
    wrong = eps[0].final.verdict
    assert 0 < wrong.fraction_passed < 1  # the nominal case passes, x0.01 does not
    expected = reward(wrong, RewardConfig()) + loose_credit(wrong, RewardConfig())
    assert g.rewards[:4] == [pytest.approx(expected)] * 4 and g.rewards[4:] == [0.0] * 4
    assert all(e.loose_credit > 0 for e in g.episodes[:4]) and all(e.loose_credit == 0 for e in g.episodes[4:])
    assert [e.sample_index for e in g.episodes] == list(range(8)) and {e.group_id for e in g.episodes} == {"g-fail"}


def test_a_group_with_a_solution_gets_no_loose_credit(evaluator, relu):
    eps = run(rollout_group(evaluator, relu, answers(fenced(relu.solution), *[fenced(relu.wrong)] * 7), "single",
                            "g-ok"))
    g = score_group(eps)
    assert not g.loose_applied and not g.all_equal
    assert g.rewards == [e.base_reward for e in eps] and g.rewards[0] > g.rewards[1]


def test_an_all_equal_group_is_flagged_for_resampling(evaluator, relu):
    g = score_group(run(rollout_group(evaluator, relu, answers(*[fenced(relu.wrong)] * 8), "single", "g-same")))
    assert g.all_equal and g.resample and g.loose_applied
    g = score_group(run(rollout_group(evaluator, relu, answers(*["no block"] * 8), "single", "g-zero")))
    assert g.all_equal and g.rewards == [0.0] * 8


def test_group_size_mismatch_is_noted_and_mixed_groups_refused(evaluator, relu):
    eps = run(rollout_group(evaluator, relu, answers("a", "b"), "single", "g-two"))
    assert score_group(eps, config=GroupConfig(group_size=8)).notes
    other = run(rollout_group(evaluator, relu, answers("c"), "single", "g-other"))
    with pytest.raises(ValueError):
        score_group(eps + other)
