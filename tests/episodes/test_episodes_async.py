"""The async model: many episodes on one event loop overlap their verifications; LocalEvaluator
serialises one verifier off the loop; the verdict cache; the sync facade; the protocol's imports."""

import asyncio
import subprocess
import sys
import threading

import pytest

from kgym.contract import EvalRequest, Verdict
from kgym.episodes import CachedEvaluator, Evaluator, KernelEnv, LocalEvaluator, SyncRunner, rollout, rollout_group

from episodes_helpers import SleepyEvaluator, call, fenced, passing_verdict, run, says


def answer(i):
    """A distinct single-turn answer per episode (distinct evaluation ids)."""
    return fenced(f"x = {i}\n")


def test_eight_single_turn_episodes_overlap_their_evaluations(relu):
    ev = SleepyEvaluator()
    assert isinstance(ev, Evaluator)
    eps = run(rollout_group(ev, relu, [(lambda m, i=i: answer(i)) for i in range(8)], "single", "g-async"))
    assert ev.max_in_flight == 8 and len(ev.requests) == 8  # every episode was waiting at once
    assert [e.sample_index for e in eps] == list(range(8)) and all(e.solved and e.reward > 0 for e in eps)
    assert [r.episode.sample_index for r in ev.requests] == list(range(8))  # requests carry the coordinates
    assert {r.episode.group_id for r in ev.requests} == {"g-async"} and {r.episode.turn for r in ev.requests} == {1}


def test_eight_repair_episodes_on_one_loop_overlap_at_each_submission(relu):
    ev = SleepyEvaluator()

    async def episode(i):
        env = KernelEnv(ev)
        await env.reset(relu, "repair", group_id="g-rep", sample_index=i)
        s = await env.step(says(call("submit_kernel", code=f"x = {i}\n")))
        eid = s.observation[0]["content"].split("evaluation_id: ")[1].split()[0]
        s = await env.step(says(call("finalize", evaluation_id=eid)))
        return s, env.result()

    async def main():
        return await asyncio.gather(*(episode(i) for i in range(8)))

    out = run(main())
    assert ev.max_in_flight == 8
    assert all(s.terminated and not s.truncated and r.end_reason == "finalized" for s, r in out)
    assert [r.episode.turn for r in ev.requests] == [1] * 8


def test_one_env_refuses_a_second_concurrent_step(relu):
    env = KernelEnv(SleepyEvaluator(delay=0.05))

    async def main():
        await env.reset(relu, "repair")
        first = asyncio.ensure_future(env.step(says(call("submit_kernel", code="x = 1\n"))))
        await asyncio.sleep(0)  # let the first step reach the evaluator
        with pytest.raises(RuntimeError, match="one step at a time"):
            await env.step(says(call("submit_kernel", code="x = 2\n")))
        return await first

    s = run(main())
    assert not s.terminated and not s.truncated and not env.done  # the first step completed normally
    assert env.messages[-1]["role"] == "tool" and len(env.messages) == 4


def test_async_policies_and_turn_limit_truncation(relu):
    async def policy(messages):
        await asyncio.sleep(0)
        return says(call("inspect_evaluation", evaluation_id="nothing-yet"))

    from kgym.episodes import EpisodeConfig

    r = run(rollout(KernelEnv(SleepyEvaluator(), EpisodeConfig(max_turns=2)), relu, policy))
    assert r.end_reason == "turn_limit" and r.truncated and not r.terminated and r.turns == 2


class BlockingVerifier:
    """A verifier whose verify blocks its thread until released; it records which threads call it
    and how many calls overlap."""

    def __init__(self):
        self.release = threading.Event()
        self.threads = set()
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()

    def verify(self, reference, candidate, **overrides):
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.threads.add(threading.get_ident())
        assert self.release.wait(30), "never released"
        with self.lock:
            self.active -= 1
        if candidate == "boom":
            raise RuntimeError("verifier broke")
        return passing_verdict()


def request(candidate, relu):
    return EvalRequest.for_task(relu, candidate)


def test_local_evaluator_runs_one_verify_at_a_time_off_the_event_loop(relu):
    v = BlockingVerifier()
    local = LocalEvaluator(v)

    async def main():
        calls = [asyncio.ensure_future(local.evaluate(request(f"x = {i}\n", relu))) for i in range(4)]
        # the loop is free while verify blocks its thread: this coroutine runs and releases it
        while v.active == 0:
            await asyncio.sleep(0.001)
        v.release.set()
        return await asyncio.gather(*calls)

    verdicts = run(main())
    local.close()
    assert all(x.passed for x in verdicts) and local.calls == 4
    assert v.max_active == 1 and len(v.threads) == 1 and threading.get_ident() not in v.threads


def test_local_evaluator_turns_a_verifier_exception_into_an_error_verdict(relu):
    v = BlockingVerifier()
    v.release.set()
    local = LocalEvaluator(v)
    verdict = run(local.evaluate(request("boom", relu)))
    local.close()
    assert verdict.error and "verifier broke" in verdict.error and not verdict.passed


def test_cache_lru_errors_and_shared_in_flight_verifications(relu):
    ev = SleepyEvaluator()
    cache = CachedEvaluator(ev, max_cached=2)

    async def main():
        same = await asyncio.gather(*(cache.evaluate(request("x = 0\n", relu)) for _ in range(8)))
        assert ev.max_in_flight == 1 and cache.verified == 1 and cache.hits == 7 and all(v is same[0] for v in same)
        await cache.evaluate(request("x = 1\n", relu))
        await cache.evaluate(request("x = 2\n", relu))  # evicts x = 0 (least recently used)
        assert request("x = 0\n", relu).evaluation_id not in cache and len(cache) == 2
        await cache.evaluate(request("x = 0\n", relu))
        assert cache.verified == 4

    run(main())
    broken = SleepyEvaluator(verdict=Verdict(error="worker died"))
    cache = CachedEvaluator(broken)
    for _ in range(2):
        assert run(cache.evaluate(request("x = 9\n", relu))).error == "worker died"
    assert cache.verified == 2 and len(cache) == 0  # a kgym error is retried, never cached


def test_sync_runner_runs_coroutines_and_refuses_inside_a_running_loop():
    runner = SyncRunner()

    async def seven():
        return 7

    assert runner.run(seven()) == 7 and runner.run(seven()) == 7

    async def nested():
        return runner.run(seven())

    with pytest.raises(RuntimeError, match="running event loop"):
        run(nested())
    runner.close()


def test_the_protocol_and_cache_import_without_torch_or_ray():
    code = ("import sys, kgym.episodes.evaluator, kgym.episodes.cache, kgym.episodes.turn_tokens; "
            "print(sorted(m for m in ('torch', 'ray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_no_submodule_shadows_an_exported_name():
    import pkgutil

    import kgym.episodes as episodes

    assert not {m.name for m in pkgutil.iter_modules(episodes.__path__)} & set(episodes.__all__)
    for name in episodes.__all__:
        assert getattr(episodes, name) is not None
