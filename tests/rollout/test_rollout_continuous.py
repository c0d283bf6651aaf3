"""Continuous batching (kgym.rollout.continuous): a request joins the running batch at the next
engine iteration instead of waiting for the round in progress; every request isolated; base and
LoRA requests never decode in one iteration; an engine failure fails what was running and the
batcher serves on. First on engines written here (a countdown engine whose request k needs
max_tokens iterations; the scripted engine), then on vLLM's CPU engine."""

from __future__ import annotations

import asyncio
import time

import pytest
from rollout_helpers import CannedEvaluator, ScriptedEngine, partial_verdict, tool_call_text

from kgym.contract import Mode
from kgym.rollout.adapters import AdapterRegistry, PolicyAdapter
from kgym.rollout.continuous import ContinuousBatcher
from kgym.rollout.driver import RolloutDriver
from kgym.rollout.engine import Completion, EngineUnavailable, FinishReason, PromptTooLong, StaleAdapter
from kgym.rollout.sampling import RL_SAMPLING, SamplingConfig
from kgym.tasks import make

LORA = PolicyAdapter(version=1, lora_id=7, path="/nowhere")


class CountdownEngine:
    """Request k finishes after `max_tokens` iterations, one token (its own index) per iteration.
    `log` holds, per iteration, the (key, lora?) of the requests decoded in it. `fail_at` makes
    that iteration raise `fail_with`."""

    max_model_len = 100

    def __init__(self, fail_at: int | None = None, fail_with: BaseException | None = None):
        self.live: dict[str, list] = {}
        self.log: list[list[tuple[str, bool]]] = []
        self.fail_at, self.fail_with = fail_at, fail_with
        self.aborted: list[str] = []
        self.n = 0

    def add(self, prompt, sampling, adapter=None, seed=None) -> str:
        if not prompt:
            raise ValueError("empty prompt")
        key = f"k{self.n}"
        self.n += 1
        self.live[key] = [sampling.max_tokens, adapter, []]
        return key

    @property
    def streaming(self) -> int:
        return len(self.live)

    def step(self):
        time.sleep(0.002)  # an iteration takes time, as a real one does
        if self.fail_at is not None and len(self.log) == self.fail_at:
            self.log.append([])
            raise self.fail_with
        self.log.append([(k, v[1] is not None) for k, v in self.live.items()])
        done = []
        for key, v in list(self.live.items()):
            v[2].append(len(self.log))
            v[0] -= 1
            if v[0] == 0:
                a = v[1]
                ids = tuple(v[2])
                done.append((key, Completion(ids, (-1.0,) * len(ids), key, FinishReason.LENGTH,
                                             a.version if a else 0, a.lora_id if a else None)))
                del self.live[key]
        return done

    def abort_streamed(self):
        self.aborted += list(self.live)
        self.live.clear()


def _s(n: int) -> SamplingConfig:
    return SamplingConfig(max_tokens=n)


def test_a_late_request_joins_the_running_batch_and_finishes_first():
    engine = CountdownEngine()
    batcher = ContinuousBatcher(engine)

    async def run():
        long = asyncio.create_task(batcher.generate((1, 2), _s(400), None))
        while len(engine.log) < 5:  # the long request is decoding
            await asyncio.sleep(0.001)
        short = await batcher.generate((3,), _s(3), None)
        assert not long.done()  # the short one did not wait for the long one's "round"
        return short, await long

    short, long = asyncio.run(run())
    batcher.close()
    assert len(short.token_ids) == 3 and len(long.token_ids) == 400
    first = short.token_ids[0]  # the iteration the short request was first decoded in
    assert first > 5 and first - 1 in long.token_ids and first < long.token_ids[-1]
    st = batcher.stats
    assert st.requests == 2 and st.calls == 2 and st.steps == 400 and st.largest_batch == 2
    assert st.tokens == 403 and 1.0 < st.mean_running < 1.1 and batcher.queued == 0


def test_requests_fail_alone_at_admission():
    engine = CountdownEngine()
    batcher = ContinuousBatcher(engine)
    registry_engine_serves = {None, 7}
    engine.serves = lambda a: a is None or a.lora_id in registry_engine_serves
    retired = PolicyAdapter(version=0, lora_id=3, path="/old")

    async def run():
        return await asyncio.gather(batcher.generate((1,), _s(2), None), batcher.generate((), _s(2), None),
                                    batcher.generate(tuple(range(100)), _s(2), None),
                                    batcher.generate((1,), _s(2), retired), batcher.generate((2,), _s(4), None),
                                    return_exceptions=True)

    got = asyncio.run(run())
    batcher.close()
    assert [type(g) for g in got] == [Completion, ValueError, PromptTooLong, StaleAdapter, Completion]
    assert "max_model_len 100" in str(got[2]) and "retired" in str(got[3])
    assert batcher.stats.refused == 3 and batcher.stats.requests == 2


def test_base_and_lora_requests_never_share_an_iteration_and_neither_starves():
    engine = CountdownEngine()
    batcher = ContinuousBatcher(engine)

    async def run():
        first = [asyncio.create_task(batcher.generate((1,), _s(6), None)) for _ in range(2)]
        while not engine.log:
            await asyncio.sleep(0.001)
        lora = asyncio.create_task(batcher.generate((2,), _s(3), LORA))
        await asyncio.sleep(0)
        late_base = asyncio.create_task(batcher.generate((3,), _s(2), None))  # queued behind the LoRA one
        return await asyncio.gather(*first, lora, late_base)

    *firsts, lora, late = asyncio.run(run())
    batcher.close()
    assert all(len({kind for _, kind in it}) <= 1 for it in engine.log)  # one kind per iteration
    assert lora.lora_id == 7 and lora.policy_version == 1
    # the LoRA request waited for the base ones to drain; the late base request waited behind it
    assert lora.token_ids[0] > max(max(f.token_ids) for f in firsts)
    assert late.token_ids[0] > max(lora.token_ids)


def test_an_engine_failure_fails_the_running_requests_and_the_batcher_serves_on():
    for error in (EngineUnavailable("vLLM's engine core died"), RuntimeError("CUDA error: an illegal address")):
        engine = CountdownEngine(fail_at=2, fail_with=error)
        batcher = ContinuousBatcher(engine)

        async def run(batcher):
            got = await asyncio.gather(*[batcher.generate((1,), _s(5), None) for _ in range(3)],
                                       return_exceptions=True)
            after = await batcher.generate((2,), _s(2), None)
            return got, after

        got, after = asyncio.run(run(batcher))
        batcher.close()
        assert all(g is error for g in got) and len(engine.aborted) == 3
        assert isinstance(after, Completion) and len(after.token_ids) == 2


def test_close_fails_what_is_unanswered():
    engine = CountdownEngine()
    batcher = ContinuousBatcher(engine)

    async def run():
        t = asyncio.create_task(batcher.generate((1,), _s(10**9), None))
        while not engine.log:
            await asyncio.sleep(0.001)
        await asyncio.to_thread(batcher.close)
        return await asyncio.gather(t, return_exceptions=True)

    (got,) = asyncio.run(run())
    assert isinstance(got, RuntimeError) and "closed" in str(got)
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(batcher.generate((1,), _s(1), None))


def test_episodes_through_the_continuous_batcher(tiny_tok):
    """The driver runs repair episodes on it as on the round batcher (the scripted engine's stream)."""
    relu = make("relu-v1", seed=1, size="tiny")
    submit = "I will submit.\n" + tool_call_text("submit_kernel", code=relu.wrong)
    engine = ScriptedEngine(tiny_tok, lambda prompt: submit)
    batcher = ContinuousBatcher(engine)
    driver = RolloutDriver(batcher, CannedEvaluator(partial_verdict()), tiny_tok, AdapterRegistry(),
                           sampling=RL_SAMPLING.replace(group_size=4, max_tokens=2048))
    (g,) = asyncio.run(driver.run_groups([relu], modes=[Mode.REPAIR]))
    batcher.close()
    assert len(g.episodes) == 4 and all(ep.error is None and ep.result.submissions >= 1 for ep in g.episodes)
    assert engine.calls == [] and sum(engine.steps) == batcher.stats.requests  # stream only, never generate()


# -- vLLM's CPU engine -----------------------------------------------------------------------------

def test_vllm_stream_matches_a_blocking_call_and_a_late_request_overtakes(engine, tiny_tok):
    prompt = tuple(tiny_tok.encode("def relu(x):", add_special_tokens=False))
    greedy = SamplingConfig(temperature=0.0, max_tokens=24, group_size=1, seed=0)
    (ref,) = engine.generate([prompt], greedy, None)[0]
    batcher = ContinuousBatcher(engine)

    async def run():
        long = asyncio.create_task(batcher.generate(prompt, greedy.replace(max_tokens=400, temperature=1.0), None,
                                                    seed=11))
        while batcher.stats.steps < 3:
            await asyncio.sleep(0.005)
        short = await batcher.generate(prompt, greedy, None)
        return short, long.done(), await long

    short, long_done_before, long = asyncio.run(run())

    async def empty():
        return (await asyncio.gather(batcher.generate((), greedy, None), return_exceptions=True))[0]

    bad = asyncio.run(empty())
    batcher.close()
    assert short.token_ids == ref.token_ids and short.logprobs == pytest.approx(ref.logprobs, abs=1e-4)
    if len(long.token_ids) == 400:  # seed 11 ran to its cap: the short request finished first
        assert not long_done_before
    assert isinstance(bad, Exception) and not isinstance(bad, EngineUnavailable)
    assert engine.streaming == 0 and batcher.stats.refused == 1
    assert batcher.stats.largest_batch == 2 and batcher.stats.steps > 3


def test_the_trace_records_requests_in_flight_per_iteration():
    """benchmarks/rollout_occupancy.py reads requests in flight over time from the trace: one entry
    per iteration, (seconds since the first, requests decoded, requests waiting)."""
    engine = CountdownEngine()
    trace: list = []
    batcher = ContinuousBatcher(engine, trace=trace)

    async def run():
        return await asyncio.gather(batcher.generate((1,), _s(6), None), batcher.generate((2,), _s(3), None))

    asyncio.run(run())
    batcher.close()
    assert len(trace) == batcher.stats.steps == len(engine.log)
    assert [r for _, r, _ in trace] == [len(step) for step in engine.log]
    assert trace[0][0] == 0.0 and all(a[0] <= b[0] for a, b in zip(trace, trace[1:]))
    assert sum(r for _, r, _ in trace) == batcher.stats.running_sum == 9
