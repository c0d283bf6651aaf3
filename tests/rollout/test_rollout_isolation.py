"""Every request isolated, every prompt bounded (issue 28, point 4), on a scripted engine that
refuses a whole call as vLLM does (an empty prompt, or one of max_model_len tokens or more): one
bad request fails only its own episode, with the reason; a repair episode whose next prompt would
outgrow the context ends as truncated (context_limit), scored with what it has; a turn near the
end of the context gets max_tokens capped to the room left. The same against vLLM's CPU engine is
in test_rollout_vllm.py."""

from __future__ import annotations

import asyncio

import pytest
from rollout_helpers import CannedEvaluator, ScriptedEngine, partial_verdict, tool_call_text

from kgym.contract import EndReason, Mode
from kgym.episodes import EpisodeConfig, flatten_episode
from kgym.episodes.flatten import FlattenKind
from kgym.rollout.adapters import AdapterRegistry
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.context_budget import ContextBudget
from kgym.rollout.driver import RolloutDriver
from kgym.rollout.engine import Completion, EngineUnavailable, PromptTooLong
from kgym.rollout.sampling import RL_SAMPLING
from kgym.rollout.turn_prompts import ChatPrompter
from kgym.tasks import make
from kgym.tasks.prompts import TOOLS, repair_messages


@pytest.fixture(scope="module")
def relu():
    return make("relu-v1", seed=1, size="tiny")


async def _gather(batcher, prompts, sampling=RL_SAMPLING):
    return await asyncio.gather(*[batcher.generate(p, sampling, None, seed=k) for k, p in enumerate(prompts)],
                                return_exceptions=True)


def test_one_over_long_and_one_refused_request_fail_alone(tiny_tok):
    engine = ScriptedEngine(tiny_tok, lambda prompt: "ok", max_model_len=64)
    batcher = GenerationBatcher(engine)
    healthy = [(5, 6, 7)] * 3
    over_long, empty = tuple(range(3, 67)), ()
    got = asyncio.run(_gather(batcher, healthy[:2] + [over_long] + healthy[2:] + [empty]))
    assert [type(g) for g in got] == [Completion, Completion, PromptTooLong, Completion, ValueError]
    assert "max_model_len 64" in str(got[2]) and "empty" in str(got[4])
    # the over-long prompt never reached the engine; the empty one was isolated by splitting the call
    assert batcher.stats.refused == 2 and batcher.stats.splits >= 1 and batcher.stats.requests == 3


def test_an_unavailable_engine_fails_the_round_without_splitting(tiny_tok):
    class Asleep:
        calls = 0

        def generate(self, *a, **k):
            Asleep.calls += 1
            raise EngineUnavailable("the engine is asleep")

    batcher = GenerationBatcher(Asleep())
    got = asyncio.run(_gather(batcher, [(5,)] * 4))
    assert all(isinstance(g, EngineUnavailable) for g in got) and Asleep.calls == 1 and batcher.stats.splits == 0


def test_a_repair_episode_that_outgrows_the_context_ends_truncated_and_scored(tiny_tok, relu):
    """Turn 1 fits (its max_tokens capped to the room); turn 2's prompt, with the tool message,
    would leave less than the minimum: context_limit, the submission scored, no error."""
    submit = "I will submit.\n" + tool_call_text("submit_kernel", code=relu.wrong)
    p1 = len(ChatPrompter(tiny_tok, TOOLS).first(repair_messages(relu, EpisodeConfig().max_submissions)).ids)
    c1 = len(tiny_tok.encode(submit, add_special_tokens=False)) + 1
    limit = p1 + c1 + 80  # turn 1: room c1 + 80; turn 2: the tool message takes more than 80 - 64
    engine = ScriptedEngine(tiny_tok, lambda prompt: submit, max_model_len=limit)
    driver = RolloutDriver(GenerationBatcher(engine), CannedEvaluator(partial_verdict()), tiny_tok, AdapterRegistry(),
                           sampling=RL_SAMPLING.replace(group_size=2, max_tokens=100_000),
                           episode=EpisodeConfig(max_turns=4), context=ContextBudget(limit, min_generation_tokens=64))
    (g,) = asyncio.run(driver.run_groups([relu], modes=[Mode.REPAIR]))
    assert engine.max_tokens == [c1 + 80] * 2  # capped to the room, not the 100,000 asked
    for ep in g.episodes:
        r = ep.result
        assert ep.error is None and r.end_reason is EndReason.CONTEXT_LIMIT and r.truncated
        assert r.turns == 1 and r.submissions == 1 and r.final_evaluation_id == r.evaluations[0].evaluation_id
        assert r.reward == pytest.approx(0.25) and "context limit: turn 2's prompt" in r.reason
        assert flatten_episode(r).kind is FlattenKind.ONE_SAMPLE  # trained on like any finished episode


def test_a_first_prompt_over_the_context_is_truncated_with_reward_zero(tiny_tok, relu):
    engine = ScriptedEngine(tiny_tok, lambda prompt: "x", max_model_len=100)
    driver = RolloutDriver(GenerationBatcher(engine), CannedEvaluator(partial_verdict()), tiny_tok, AdapterRegistry(),
                           sampling=RL_SAMPLING.replace(group_size=2))  # the bound from the engine's max_model_len
    groups = asyncio.run(driver.run_groups([relu, relu], modes=[Mode.SINGLE, Mode.REPAIR]))
    assert engine.calls == []
    for ep in (e for g in groups for e in g.episodes):
        assert ep.error is None and ep.result.end_reason is EndReason.CONTEXT_LIMIT and ep.result.reward == 0.0

