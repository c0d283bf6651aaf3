"""The rollout driver without vLLM: a scripted engine (its text a function of the decoded prompt)
drives a repair episode and single-turn answers through the real CPU verifier, interleaved in
shared generation batches; turn prompts extend the previous turn token for token."""

from __future__ import annotations

import asyncio
import re

import pytest
from rollout_helpers import ScriptedEngine, tool_call_text

from kgym.contract import EndReason, Mode
from kgym.episodes import CachedEvaluator, EpisodeConfig, LocalEvaluator, flatten_episode
from kgym.episodes.flatten import FlattenKind
from kgym.rollout.adapters import AdapterRegistry
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.driver import RolloutDriver
from kgym.rollout.sampling import RL_SAMPLING
from kgym.tasks import make


@pytest.fixture(scope="module")
def relu():
    return make("relu-v1", seed=1, size="tiny")


def script_for(task):
    def script(prompt: str) -> str:
        if "<tool_response>" in prompt:  # repair, turn 2: finalize the id the tool message gave
            ids = re.findall(r"evaluation_id: ([0-9a-f]+)", prompt)
            return tool_call_text("finalize", evaluation_id=ids[-1])
        if "submit_kernel" in prompt:  # repair, turn 1 (the tools are rendered into the prompt)
            return "I will submit.\n" + tool_call_text("submit_kernel", code=task.wrong)
        return "Here.\n```python\n" + task.wrong + "\n```\n"
    return script


def test_repair_and_single_episodes_share_batches(verifier, tiny_tok, relu):
    engine = ScriptedEngine(tiny_tok, script_for(relu))
    local = LocalEvaluator(verifier)
    try:
        driver = RolloutDriver(GenerationBatcher(engine), CachedEvaluator(local), tiny_tok, AdapterRegistry(),
                               sampling=RL_SAMPLING.replace(group_size=2), episode=EpisodeConfig(max_turns=4))
        groups = asyncio.run(driver.run_groups([relu, relu], group_ids=["g-rep", "g-single"],
                                               modes=[Mode.REPAIR, Mode.SINGLE]))
    finally:
        local.close()
    rep, single = groups
    assert [len(g.episodes) for g in groups] == [2, 2] and rep.mode is Mode.REPAIR and single.mode is Mode.SINGLE
    # every episode's first turn went into one engine call: 4 prompts, single and repair together
    assert engine.calls[0] == 4
    for ep in rep.episodes:
        r = ep.result
        assert ep.error is None and r.end_reason is EndReason.FINALIZED and r.turns == 2 and r.submissions == 1
        assert r.final_evaluation_id == r.evaluations[0].evaluation_id
        # the known-wrong kernel fails the nominal case, so no partial credit (issue 29: it needs the nominal case)
        assert r.reward == 0.0 and r.evaluations[0].verdict.gate == "correctness"
        assert [t.tool_calls for t in ep.turns] == [1, 1] and all(not t.tool_call_problems for t in ep.turns)
        assert [t.prompt_rebuilt for t in ep.turns] == [True, False]
        s1, s2 = r.turn_samples
        assert s2.prompt_ids[:len(s1.stream)] == s1.stream  # turn 2 extends turn 1 token for token
        flat = flatten_episode(r)
        assert flat.kind is FlattenKind.ONE_SAMPLE, flat.reason
        assert flat.samples[0].policy_version == 0
    for ep in single.episodes:
        assert ep.result.end_reason is EndReason.ANSWERED and ep.result.turns == 1
        assert ep.result.reward == pytest.approx(rep.episodes[0].result.evaluations[0].reward)


def test_a_failed_generation_is_an_error_not_a_score(tiny_tok, relu):
    class Broken:
        def generate(self, *a, **k):
            raise RuntimeError("engine died")

    class NoEval:
        async def evaluate(self, request):  # pragma: no cover
            raise AssertionError

    driver = RolloutDriver(GenerationBatcher(Broken()), NoEval(), tiny_tok, AdapterRegistry(),
                           sampling=RL_SAMPLING.replace(group_size=3))
    (g,) = asyncio.run(driver.run_groups([relu], modes=[Mode.REPAIR]))
    assert all(e.result is None and "engine died" in e.error for e in g.episodes) and g.results == []
