"""vLLM's CPU build on the tiny model: sampler log-probs at the sampling temperature, groups,
episodes driven through the engine, LoRA hot-swap, and the CUDA-only sleep refused on CPU.
Skipped where vLLM is not installed. One engine serves the whole module (its start is the cost)."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from rollout_helpers import requires_vllm

from kgym.contract import EndReason, Mode
from kgym.episodes import EpisodeConfig
from kgym.rollout.adapters import AdapterRegistry
from kgym.rollout.batcher import GenerationBatcher
from kgym.rollout.driver import RolloutDriver
from kgym.rollout.engine import FinishReason, StaleAdapter
from kgym.rollout.sampling import SamplingConfig
from kgym.tasks import make

pytestmark = [requires_vllm, pytest.mark.slow]
GREEDY = SamplingConfig(temperature=0.0, max_tokens=12, group_size=1)


class NoEvaluations:
    """The random model never writes a valid call; a submission would be a test bug."""

    async def evaluate(self, request):  # pragma: no cover
        raise AssertionError("unexpected submission")


def prompt(tok, text="def relu(x):"):
    return tok.encode(text, add_special_tokens=False)


def test_logprobs_are_of_the_tempered_distribution(engine, tiny_dir, tiny_tok):
    import torch
    from transformers import AutoModelForCausalLM

    t = 0.1  # sharp enough that raw and tempered log-probs differ clearly on a random model
    ids = prompt(tiny_tok)
    (row,) = engine.generate([ids], SamplingConfig(temperature=t, max_tokens=16), n=2, seeds=[7])
    model = AutoModelForCausalLM.from_pretrained(tiny_dir, torch_dtype=torch.float32).eval()
    for c in row:
        assert len(c.token_ids) == len(c.logprobs) > 0 and all(lp <= 0 for lp in c.logprobs)
        full = torch.tensor([ids + list(c.token_ids)])
        with torch.no_grad():
            logits = model(full).logits[0, len(ids) - 1:-1].float()
        picked = torch.tensor(c.token_ids)
        tempered = torch.log_softmax(logits / t, -1).gather(1, picked[:, None])[:, 0]
        raw = torch.log_softmax(logits, -1).gather(1, picked[:, None])[:, 0]
        got = torch.tensor(c.logprobs)
        err_tempered = (got - tempered).abs().mean().item()
        err_raw = (got - raw).abs().mean().item()
        assert err_tempered < 0.05 and err_raw > 10 * err_tempered, (err_tempered, err_raw)


def test_a_group_of_eight(engine, tiny_tok):
    (row,) = engine.generate([prompt(tiny_tok)], SamplingConfig(temperature=1.0, max_tokens=24), n=8)
    assert len(row) == 8
    assert len({c.token_ids for c in row}) > 1  # sampled, not copied
    for c in row:
        assert len(c.logprobs) == len(c.token_ids) and c.finish_reason in (FinishReason.STOP, FinishReason.LENGTH)
        assert c.policy_version == 0 and c.lora_id is None


def test_single_and_repair_episodes_through_the_engine(engine, tiny_tok):
    """Two groups of four, one single-turn and one repair (two turns: the random model makes no
    call, so the env answers with an error and the turn limit ends it), all in shared batches."""
    tasks = [make("relu-v1", seed=1, size="tiny"), make("relu-v1", seed=2, size="tiny")]
    batcher = GenerationBatcher(engine)
    driver = RolloutDriver(batcher, NoEvaluations(), tiny_tok, AdapterRegistry(),
                           sampling=SamplingConfig(temperature=1.0, max_tokens=16, group_size=4, seed=3),
                           episode=EpisodeConfig(max_turns=2))
    single, repair = asyncio.run(driver.run_groups(tasks, modes=[Mode.SINGLE, Mode.REPAIR]))
    assert batcher.stats.batch_sizes[0] == 8  # every first turn in one engine call
    for ep in single.episodes:
        assert ep.error is None and ep.result.end_reason in (EndReason.NO_CODE, EndReason.TRUNCATED)
        assert ep.result.turn_samples[0].logprobs is not None
    for ep in repair.episodes:
        r = ep.result
        assert ep.error is None and r.end_reason is EndReason.TURN_LIMIT and r.turns == 2 and r.reward == 0
        s1, s2 = r.turn_samples
        assert s2.prompt_ids[:len(s1.stream)] == s1.stream and not ep.turns[1].prompt_rebuilt
        assert all(len(s.logprobs) == len(s.completion_ids) for s in (s1, s2))
    # the seeds make a rerun of the same group repeat its samples
    again = asyncio.run(driver.run_groups(tasks[:1], modes=[Mode.SINGLE]))[0]
    assert [e.turns[0].text for e in again.episodes] == [e.turns[0].text for e in single.episodes]


def test_lora_hot_swap(engine, tiny_tok, adapters, tmp_path):
    ids = prompt(tiny_tok)
    reg = AdapterRegistry(window=1)

    def greedy(version=None):
        (row,) = engine.generate([ids], GREEDY, reg.get(version))
        return row[0]

    base = greedy()
    v1 = reg.publish(1, adapters[0])
    assert engine.load(v1)
    out1 = greedy()
    v2 = reg.publish(2, adapters[1])
    out2 = greedy()
    assert len({base.token_ids, out1.token_ids, out2.token_ids}) == 3  # each version changes the output
    assert (out1.policy_version, out1.lora_id, out2.policy_version, out2.lora_id) == (1, v1.lora_id, 2, v2.lora_id)
    # base and LoRA requests in one call (the engine splits them: a mixed vLLM batch altered the base)
    mixed = engine.generate([ids, ids], [GREEDY, GREEDY], [reg.get(0), v2])
    assert mixed[0][0].token_ids == base.token_ids and mixed[1][0].token_ids == out2.token_ids
    assert [a.version for a in reg.retire_stale()] == [0]  # window 1: v0 is two behind v2

    v3 = reg.publish(3, adapters[2])
    for old in reg.retire_stale():
        engine.unload(old)
    assert [a.version for a in reg.live] == [2, 3]
    assert v1.lora_id not in engine.loaded_ids()
    with pytest.raises(StaleAdapter):
        engine.generate([ids], GREEDY, v1)  # the retired id is never served again
    out3 = greedy()
    assert out3.lora_id == v3.lora_id and out3.token_ids != out2.token_ids
    # v1's weights again, as a new version at a fresh path: a fresh id, and v1's output (nothing stale)
    with pytest.raises(ValueError, match="fresh directory"):
        reg.publish(4, adapters[0])
    copy = shutil.copytree(adapters[0], tmp_path / "v4")
    v4 = reg.publish(4, copy)
    assert v4.lora_id not in (v1.lora_id, v2.lora_id, v3.lora_id)
    assert greedy().token_ids == out1.token_ids


def test_sleep_is_refused_off_cuda(engine):
    if engine.on_cuda:
        pytest.skip("on CUDA sleep mode is real (not run here)")
    out = engine.sleep()
    assert not out.ok and "CUDA" in out.reason and not engine.asleep
    assert not engine.wake().ok


def test_throughput(engine, tiny_tok, capsys):
    """Figures for docs/rollout.md: the engine's start and a batch of 16 x 128 tokens."""
    import time

    t0 = time.perf_counter()
    rows = engine.generate([prompt(tiny_tok)] * 2, SamplingConfig(temperature=1.0, max_tokens=128, stop=()), n=8,
                           seeds=[1, 2])
    dt = time.perf_counter() - t0
    tokens = sum(len(c.token_ids) for r in rows for c in r)
    with capsys.disabled():
        print(f"\n[rollout figures] engine start {engine.start_seconds:.1f} s; {tokens} tokens in {dt:.2f} s "
              f"= {tokens / dt:.0f} tokens/s (16 sequences, tiny model, CPU)")
    assert tokens > 0


def test_a_scripted_repair_episode_through_the_engine_and_the_verifier(engine, tiny_tok, verifier):
    """The engine's own tokens and log-probs, its text forced (structured outputs) to a tool call that
    submits relu's known-wrong kernel and then to finalize its id; the real CPU verifier judges it."""
    from rollout_helpers import tool_call_text

    from kgym.episodes import CachedEvaluator, KernelEnv, LocalEvaluator, TurnSample, flatten_episode
    from kgym.episodes.evaluator import episode_request
    from kgym.episodes.flatten import FlattenKind
    from kgym.rollout.toolcalls import parse_tool_calls
    from kgym.rollout.turn_prompts import ChatPrompter
    from kgym.tasks.prompts import TOOLS

    task = make("relu-v1", seed=1, size="tiny")
    eid = episode_request(task, task.wrong).evaluation_id  # an episode's answer: its hidden cases salted
    script = [tool_call_text("submit_kernel", code=task.wrong), tool_call_text("finalize", evaluation_id=eid)]
    local = LocalEvaluator(verifier)
    prompter = ChatPrompter(tiny_tok, TOOLS)

    async def episode():
        env = KernelEnv(CachedEvaluator(local), EpisodeConfig(max_turns=3))
        p = prompter.first(await env.reset(task, Mode.REPAIR, group_id="g", sample_index=0)).ids
        for turn, text in enumerate(script, 1):
            (row,) = engine.generate([p], SamplingConfig(temperature=1.0, max_tokens=2048, choice=(text,)))
            c = row[0]
            assert c.text == text and len(c.logprobs) == len(c.token_ids)
            step = await env.step(parse_tool_calls(c.text, f"call_{turn}").message,
                                  sample=TurnSample(p, c.token_ids, c.logprobs, policy_version=c.policy_version))
            if env.done:
                return env.result(), step
            through = env.messages[:len(env.messages) - len(step.observation)]
            assert step.observation[0]["content"].startswith(f"evaluation_id: {eid}")
            p = prompter.next(p, c.token_ids, through, step.observation).ids

    try:
        result, last = asyncio.run(episode())
    finally:
        local.close()
    assert result.end_reason is EndReason.FINALIZED and result.final_evaluation_id == eid
    # the known-wrong kernel fails the nominal case: no partial credit (issue 29)
    assert result.reward == 0.0 and result.evaluations[0].verdict.gate == "correctness"
    assert flatten_episode(result).kind is FlattenKind.ONE_SAMPLE


def test_one_bad_request_fails_alone_in_a_real_batch(engine, tiny_tok):
    """3 healthy + 1 over-long + 1 empty prompt in one round on vLLM (which refuses a whole call for
    one invalid request: on 4b45def all five were errors): the healthy three are served, the
    over-long one is refused before the call (`PromptTooLong`), the empty one by vLLM itself and
    isolated by splitting the call; without the batcher's length check vLLM's own refusal of the
    over-long prompt is isolated the same way."""
    from vllm.exceptions import VLLMValidationError

    from kgym.rollout.engine import Completion, PromptTooLong

    ok, over_long, empty = prompt(tiny_tok), list(range(3, 3 + engine.max_model_len)), []
    with pytest.raises(VLLMValidationError):  # the failure being isolated: vLLM refuses the call
        engine.generate([ok, over_long], GREEDY, None)

    class NoLengthCheck:  # the engine without max_model_len: only splitting isolates the bad request
        def __init__(self, inner):
            self.generate, self.serves = inner.generate, inner.serves

    for eng, refused_as in ((engine, PromptTooLong), (NoLengthCheck(engine), VLLMValidationError)):
        batcher = GenerationBatcher(eng)

        async def round_(batcher=batcher):
            return await asyncio.gather(*[batcher.generate(p, GREEDY, None, seed=0)
                                          for p in (ok, ok, over_long, ok, empty)], return_exceptions=True)

        got = asyncio.run(round_())
        assert [type(g) for g in got[:2] + got[3:4]] == [Completion] * 3, got
        assert isinstance(got[2], refused_as) and isinstance(got[4], VLLMValidationError), got
        assert got[0].token_ids == got[1].token_ids == got[3].token_ids  # greedy, one prompt: one answer
        assert batcher.stats.refused == 2
