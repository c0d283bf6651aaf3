"""Token-level episode results: TurnSample, flattening an episode into the learner's Sample (the
prefix rule, its fallback as a value), and episode records under a reward config."""

import pytest

from kgym.contract import EndReason, Verdict
from kgym.episodes import EpisodeConfig, FlattenKind, KernelEnv, TurnSample, flatten_episode, rollout, score_group
from kgym.records import rescore
from kgym.reward import RewardConfig, reward
from kgym.rl.batch import Sample, TrainBatch

from episodes_helpers import SleepyEvaluator, call, fenced, run, says


def repair_episode(relu, samples, evaluator=None, config=EpisodeConfig(), **reset):
    """submit, then finalize: two turns, with `samples` (one per turn, or None) given to step."""
    env = KernelEnv(evaluator or SleepyEvaluator(), config)

    async def main():
        await env.reset(relu, "repair", **reset)
        s = await env.step(says(call("submit_kernel", code="x = 1\n")), sample=samples[0])
        eid = s.observation[0]["content"].split("evaluation_id: ")[1].split()[0]
        await env.step(says(call("finalize", evaluation_id=eid)), sample=samples[1])
        return env.result()

    return run(main())


T1 = TurnSample(prompt_ids=(1, 2, 3), completion_ids=(10, 11), logprobs=(-0.1, -0.2), policy_version=4)
T2 = TurnSample(prompt_ids=(1, 2, 3, 10, 11, 20, 21), completion_ids=(12, 13), logprobs=(-0.3, -0.4), policy_version=4)


def test_turn_sample_defaults_and_checks():
    t = TurnSample((1,), (5, 6))
    assert t.loss_mask == (1, 1) and t.logprobs is None and t.stream == (1, 5, 6)
    for bad in [dict(prompt_ids=()), dict(loss_mask=(1,)), dict(loss_mask=(1, 2)), dict(logprobs=(-1.0,)),
                dict(logprobs=(0.5, -1.0)), dict(logprobs=(float("nan"), -1.0)), dict(policy_version=-1)]:
        with pytest.raises(ValueError):
            TurnSample(**{"prompt_ids": (1,), "completion_ids": (5, 6), **bad})
    assert TurnSample((1,), (5, 6), logprobs=(0.7, -1.0), loss_mask=(0, 1)).logprobs == (0.7, -1.0)  # masked: unchecked


def test_a_repair_episode_whose_turns_extend_each_other_is_one_sample(relu):
    r = repair_episode(relu, [T1, T2], group_id="g-tok")
    assert r.turn_samples == [T1, T2]
    f = flatten_episode(r)
    assert f.kind is FlattenKind.ONE_SAMPLE and f.reason == ""
    (s,) = f.samples
    assert isinstance(s, Sample) and s.group_id == "g-tok" and s.reward == r.reward > 0 and s.policy_version == 4
    assert s.prompt_ids == (1, 2, 3)
    assert s.completion_ids == (10, 11, 20, 21, 12, 13)
    assert s.loss_mask == (1, 1, 0, 0, 1, 1)  # the tool result between the turns is not trained on
    assert s.sampler_logprobs == (-0.1, -0.2, 0.0, 0.0, -0.3, -0.4)
    assert TrainBatch((s,)).loss_tokens == 4


def test_advantage_instead_of_reward_mixed_versions_and_inner_masks(relu):
    t1 = TurnSample((1, 2), (10, 99, 11), logprobs=(-0.1, 0.0, -0.2), loss_mask=(1, 0, 1), policy_version=3)
    t2 = TurnSample((1, 2, 10, 99, 11, 20), (12,), logprobs=None, policy_version=5)
    f = flatten_episode(repair_episode(relu, [t1, t2]), advantage=0.5)
    (s,) = f.samples
    assert s.advantage == 0.5 and s.reward is None
    assert s.policy_version == 3 and "[3, 5]" in f.reason  # tagged with the oldest policy that contributed
    assert s.completion_ids == (10, 99, 11, 20, 12) and s.loss_mask == (1, 0, 1, 0, 1)
    assert s.sampler_logprobs is None  # one turn without logprobs: the learner recomputes the sample


def test_a_broken_prefix_falls_back_to_one_sample_per_turn(relu):
    rerendered = TurnSample((1, 2, 3, 10, 77, 20), (12,), logprobs=(-0.3,))  # turn 1 re-rendered differently
    f = flatten_episode(repair_episode(relu, [T1, rerendered]))
    assert f.kind is FlattenKind.PER_TURN and "does not extend" in f.reason and "token 4" in f.reason
    assert [s.prompt_ids for s in f.samples] == [T1.prompt_ids, rerendered.prompt_ids]
    assert [s.completion_ids for s in f.samples] == [(10, 11), (12,)]
    assert all(s.loss_mask == (1,) * len(s.completion_ids) for s in f.samples)
    shorter = TurnSample((1, 2), (12,))
    f = flatten_episode(repair_episode(relu, [T1, shorter]))
    assert f.kind is FlattenKind.PER_TURN and "fewer than" in f.reason


def test_missing_tokens_errors_and_scripted_episodes(relu):
    f = flatten_episode(repair_episode(relu, [T1, None]))
    assert f.kind is FlattenKind.PER_TURN and "[2]" in f.reason and [s.prompt_ids for s in f.samples] == [(1, 2, 3)]
    f = flatten_episode(repair_episode(relu, [None, None]))
    assert f.kind is FlattenKind.NO_SAMPLE and f.samples == () and "scripted" in f.reason
    # every evaluation failed inside kgym: finalize refuses the errored one (test_episodes_error_drop.py), the
    # turn limit ends the episode on it, and it is dropped
    broken = repair_episode(relu, [T1, T2], evaluator=SleepyEvaluator(verdict=Verdict(error="worker died")),
                            config=EpisodeConfig(max_turns=2))
    assert broken.end_reason is EndReason.TURN_LIMIT and broken.error is not None
    f = flatten_episode(broken)
    assert f.kind is FlattenKind.NO_SAMPLE and "inside kgym" in f.reason  # never trained on


def test_single_turn_episode_is_one_sample(relu):
    t = TurnSample((1, 2, 3), (10, 11, 12), logprobs=(-1.0, -2.0, -3.0), policy_version=1)
    r = run(rollout(KernelEnv(SleepyEvaluator()), relu, lambda m: (fenced("x = 1\n"), t), "single"))
    (s,) = flatten_episode(r).samples
    assert s.prompt_ids == t.prompt_ids and s.completion_ids == t.completion_ids and s.loss_mask == (1, 1, 1)
    assert s.reward == r.reward and s.policy_version == 1


def test_records_carry_the_baseline_and_the_episode_reward_on_the_final_row(relu):
    cfg = RewardConfig(baseline="compile")
    r = repair_episode(relu, [None, None], config=EpisodeConfig(reward=cfg), group_id="g-rec", sample_index=3)
    g = score_group([r])  # under the episode's own config
    r = g.episodes[0]
    rows = r.records(cfg)
    assert len(rows) == 1 and rows[0]["baseline"] == "compile" and rows[0]["reward"] == r.reward
    assert r.reward == reward(r.final.verdict, cfg) != reward(r.final.verdict, RewardConfig())
    assert (rows[0]["group_id"], rows[0]["sample_index"], rows[0]["turn"]) == ("g-rec", 3, 1)
    assert rescore(rows[0], cfg) == pytest.approx(rows[0]["reward"])
    assert r.records() == rows  # default: the episode's own config
    with pytest.raises(ValueError, match="scored under"):
        r.records(RewardConfig())
    with pytest.raises(ValueError):
        score_group([r], RewardConfig())
