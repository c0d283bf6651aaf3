"""Repair episodes through the real verifier (CPU interpreter, tiny relu-v1): scripted policies."""

from kgym.episodes import EpisodeConfig, KernelEnv, rollout
from kgym.reward import RewardConfig, reward
from kgym.verify.parent.cases import N_CASES

from episodes_helpers import call, run, says


def scripted(*messages):
    """A policy that says `messages` in order, whatever it is shown."""
    it = iter(messages)
    return lambda conversation: next(it)


def test_wrong_then_fixed_gets_the_fixed_reward_minus_churn(evaluator, relu):
    env = KernelEnv(evaluator)
    opening = run(env.reset(relu, "repair", episode_id="ep-fix", group_id="g-fix"))
    assert [m["role"] for m in opening] == ["system", "user"] and env.tools[0]["type"] == "function"

    s1 = run(env.step(says(call("submit_kernel", code=relu.wrong))))
    assert not s1.terminated and not s1.truncated and not env.done and s1.reward == 0.0
    tool = s1.observation[0]
    assert tool["role"] == "tool" and tool["name"] == "submit_kernel" and tool["tool_call_id"] == "c-submit_kernel"
    assert "failed at gate correctness" in tool["content"] and "submissions left: 3 of 4" in tool["content"]
    wrong_id = tool["content"].split("evaluation_id: ")[1].split()[0]

    s2 = run(env.step(says(call("inspect_evaluation", evaluation_id=wrong_id[:8]))))  # a unique prefix works
    details = s2.observation[0]["content"]
    assert "first failing gate: correctness" in details and "first mismatching case" in details
    # every case listed (the identity passes none: its abs case, where ReLU is the identity, is replaced
    # by a mixed-sign variant since issue 29)
    assert "case nominal:" in details and "case abs:" in details and "diff summary" in details

    s3 = run(env.step(says(call("submit_kernel", code=relu.solution))))
    fixed_id = s3.observation[0]["content"].split("evaluation_id: ")[1].split()[0]
    assert f"passed: {N_CASES}/{N_CASES}" in s3.observation[0]["content"]
    s4 = run(env.step(says(call("finalize", evaluation_id=fixed_id))))
    assert s4.terminated and not s4.truncated and env.done

    r = env.result()
    fixed = r.final.verdict
    assert r.end_reason == "finalized" and r.submissions == 2 and r.turns == 4
    assert r.evaluation_ids == [wrong_id, fixed_id] and [e.turn for e in r.evaluations] == [1, 3]
    cfg = RewardConfig()
    assert s4.reward == r.reward == reward(fixed, cfg, submissions=2) == reward(fixed, cfg) - cfg.churn_per_submission
    assert r.reward > 0 and r.solved
    assert [m["role"] for m in r.transcript] == ["system", "user"] + ["assistant", "tool"] * 4
    rows = r.records(cfg)
    assert [row["evaluation_id"] for row in rows] == [wrong_id, fixed_id]
    assert rows[1]["group_id"] == "g-fix" and rows[1]["turn"] == 3 and rows[1]["reward"] == r.reward
    assert [row["baseline"] for row in rows] == [str(cfg.baseline)] * 2
    assert rows[0]["reward"] == reward(r.evaluations[0].verdict, cfg)  # a non-final row: its verdict's own


def test_finalize_without_a_submission_ends_with_zero(evaluator, relu):
    r = run(rollout(KernelEnv(evaluator), relu, scripted(says(call("finalize", evaluation_id="anything")))))
    assert r.end_reason == "no_submission" and r.reward == 0.0 and r.submissions == 0 and r.turns == 1


def test_too_many_submissions_are_refused_unverified(evaluator, relu):
    env = KernelEnv(evaluator, EpisodeConfig(max_submissions=2))
    run(env.reset(relu, "repair"))
    before = evaluator.verified
    for _ in range(2):
        run(env.step(says(call("submit_kernel", code=relu.wrong))))
    s = run(env.step(says(call("submit_kernel", code=relu.wrong))))
    assert "submission limit reached (2)" in s.observation[0]["content"] and s.info["errors"] == 1
    assert evaluator.verified - before <= 1  # the same code twice is verified once (cached by id)
    eid = env.messages[3]["content"].split("evaluation_id: ")[1].split()[0]
    done = run(env.step(says(call("finalize", evaluation_id=eid))))
    r = env.result()
    assert done.terminated and r.submissions == 2 and len(r.evaluations) == 2 and r.turns == 4
    assert r.reward == reward(r.final.verdict, RewardConfig(), submissions=2)


def test_malformed_and_unknown_tool_calls_are_errors_that_count_as_turns(evaluator, relu):
    env = KernelEnv(evaluator, EpisodeConfig(max_turns=4))
    run(env.reset(relu, "repair"))
    bad_json = {"id": "b1", "type": "function", "function": {"name": "submit_kernel", "arguments": "{code: oops"}}
    s1 = run(env.step(says(bad_json)))
    assert s1.observation[0]["tool_call_id"] == "b1" and "not valid JSON" in s1.observation[0]["content"]
    s2 = run(env.step(says(call("run_shell", cmd="ls"))))
    assert "unknown tool 'run_shell'" in s2.observation[0]["content"] and s2.info["errors"] == 1
    s3 = run(env.step("I think the answer is obvious."))  # no tool call at all
    assert s3.observation[0]["role"] == "user" and "no tool call" in s3.observation[0]["content"]
    s4 = run(env.step(says(call("inspect_evaluation", evaluation_id="0123456789abcdef"))))
    assert "unknown evaluation id" in s4.observation[0]["content"] and "none yet" in s4.observation[0]["content"]
    assert s4.truncated and not s4.terminated  # four turns spent on errors: the turn limit ends it
    r = env.result()
    assert r.end_reason == "turn_limit" and r.reward == 0.0 and r.turns == 4 and r.submissions == 0


def test_inspect_unknown_id_and_finalize_unknown_id_after_a_submission(evaluator, relu):
    env = KernelEnv(evaluator, EpisodeConfig(max_turns=3, inspect_token_budget=64))
    run(env.reset(relu, "repair"))
    # nearly right (zeroes 0 < x <= 1e-5: fails x0.01 only), so its reward is a share worth scoring
    nearly = relu.solution.replace("y = tl.maximum(x, 0.0)", "y = tl.where(x > 1e-5, x, 0.0)")
    assert nearly != relu.solution
    run(env.step(says(call("submit_kernel", code=nearly))))
    s = run(env.step(says(call("inspect_evaluation", evaluation_id="feedbeef"),
                          call("finalize", evaluation_id="nope"))))
    assert len(s.observation) == 2 and not s.terminated and not s.truncated
    assert all("unknown evaluation id" in o["content"] for o in s.observation)
    eid = env.messages[3]["content"].split("evaluation_id: ")[1].split()[0]
    assert eid in s.observation[0]["content"]  # the error lists the real ids
    s = run(env.step(says(call("inspect_evaluation", evaluation_id=eid))))  # the last turn: trimmed, then limit
    assert "trimmed to fit the token budget" in s.observation[0]["content"]
    r = env.result()
    # the turn limit scores the last submission (score_unfinished) with its churn
    assert s.truncated and not s.terminated and r.end_reason == "turn_limit" and r.final_evaluation_id == eid
    assert r.reward == reward(r.final.verdict, RewardConfig(), submissions=1) > 0
