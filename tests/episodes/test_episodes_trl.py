"""The TRL adapter without a trainer: dataset rows, the reward function's signature and group credit,
the tool environment's tools and schemas (transformers reads them as TRL does)."""

import inspect

import pytest

from kgym.episodes import ModeMix
from kgym.episodes.trl_adapter import (
    KgymReward,
    KgymToolEnv,
    SingleTurnEnv,
    build_dataset,
    completion_text,
    environment_factories,
    task_rows,
)
from kgym.reward import RewardConfig, loose_credit, reward
from kgym.tasks.prompts import TOOLS

from episodes_helpers import verdict_of


def assistant(text):
    return [{"role": "assistant", "content": text}]


def test_rows_and_dataset(relu):
    rows = task_rows([relu] * 40, mix=ModeMix(seed=3))
    assert {r["mode"] for r in rows} == {"single", "repair"} and all(r["environment"] == r["mode"] for r in rows)
    single = task_rows([relu])[0]
    assert single["prompt"] == [{"role": "user", "content": relu.prompt()}] and single["task_id"] == "relu-v1"
    repair = task_rows([relu], mode="repair")[0]
    assert [m["role"] for m in repair["prompt"]] == ["system", "user"]
    ds = build_dataset([relu, relu], mode="single")
    assert len(ds) == 2 and {"prompt", "task_spec", "task_id", "family", "stage", "mode"} <= set(ds.column_names)
    assert ds[0]["prompt"][0]["role"] == "user"


def test_completion_text_forms():
    assert completion_text("plain") == "plain"
    assert completion_text(assistant("x")) == "x"
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"text": "b"}]}]) == "ab"
    assert completion_text(None) is None


def test_reward_function_has_trls_signature_and_scores_groups(evaluator, relu):
    fn = KgymReward(evaluator)
    params = inspect.signature(fn).parameters
    assert {"prompts", "completions"} <= set(params) and any(p.kind is p.VAR_KEYWORD for p in params.values())
    spec = relu.spec.to_json()
    logged = {}
    wrong = f"```python\n{relu.wrong}```"
    out = fn(prompts=[None] * 3, completions=[assistant(wrong), assistant("no code"), wrong],
             completion_ids=[[1]] * 3, task_spec=[spec] * 3, mode=["single"] * 3, trainer_state=None,
             log_metric=lambda k, v: logged.setdefault(k, v), log_extra=lambda k, v: logged.setdefault(k, v))
    v = verdict_of(evaluator, relu, relu.wrong)
    cfg = RewardConfig()
    assert out == [pytest.approx(reward(v, cfg) + loose_credit(v, cfg)), 0.0, pytest.approx(out[0])]
    assert [d["end_reason"] for d in fn.last] == ["answered", "no_code", "answered"]
    assert logged["kgym/no_code"] == pytest.approx(1 / 3) and logged["kgym_end"][1] == "no_code"


def test_tool_env_methods_are_the_prompt_tools_with_schemas(relu):
    from transformers.utils import get_json_schema

    public = [n for n, _ in inspect.getmembers(KgymToolEnv, inspect.isfunction)
              if not n.startswith("_") and n not in ("reset", "get_reward")]
    assert sorted(public) == sorted(t["function"]["name"] for t in TOOLS)
    for t in TOOLS:
        schema = get_json_schema(getattr(KgymToolEnv, t["function"]["name"]))
        assert schema["function"]["name"] == t["function"]["name"]
        props = set(schema["function"]["parameters"]["properties"]) - {"self"}
        assert props == set(t["function"]["parameters"]["properties"])
    envs = environment_factories(evaluator=None)
    assert set(envs) == {"single", "repair"} and isinstance(envs["single"](), SingleTurnEnv)


def test_tool_env_runs_a_repair_episode_and_the_reward_reads_it(evaluator, relu):
    env = KgymToolEnv(evaluator)
    row = task_rows([relu], mode="repair")[0]
    assert env.reset(**row) is None
    status = env.submit_kernel(relu.wrong)
    eid = status.split("evaluation_id: ")[1].split()[0]
    assert "first failing gate: correctness" in env.inspect_evaluation(eid)
    assert "unknown evaluation id" in env.finalize("0000000000")
    assert env.finalize(eid).startswith("finalized")
    assert "episode is over" in env.submit_kernel(relu.solution)
    idle = KgymToolEnv(evaluator)
    idle.reset(**row)  # never submits: reward 0
    out = KgymReward(evaluator)(prompts=[None, None], completions=[assistant(""), assistant("")],
                                task_spec=[row["task_spec"]] * 2, mode=["repair"] * 2, environments=[env, idle])
    v = verdict_of(evaluator, relu, relu.wrong)
    assert out == [pytest.approx(reward(v, RewardConfig()) + loose_credit(v, RewardConfig())), 0.0]


def test_tool_env_turn_limit_and_single_rows(evaluator, relu):
    from kgym.episodes import EpisodeConfig

    env = KgymToolEnv(evaluator, EpisodeConfig(max_turns=2))
    env.reset(**task_rows([relu], mode="repair")[0])
    env.inspect_evaluation("a")
    env.inspect_evaluation("b")
    assert "turn limit (2)" in env.inspect_evaluation("c")
    env.reset(**task_rows([relu], mode="single")[0])
    assert "no tools" in env.submit_kernel("x")
