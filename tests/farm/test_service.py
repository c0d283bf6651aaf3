"""The farm as a service (one CPU worker, a RecordSink): `submit` awaited from the driver's event loop
and from another actor, deduplicated by evaluation id, every result streamed to the sink once.

- one id submitted by three callers at once and once more afterwards is verified once; all four get
  the same result, and the run holds one row for it;
- `FarmEvaluator` is the episodes' `Evaluator`, and works from inside another (async) actor: the
  verdicts come back, and their rows reach the sink without the caller writing any.
"""

from __future__ import annotations

import asyncio

import pytest

from farm_helpers import cpu_pool_config, good_and_wrong, rows

ray = pytest.importorskip("ray")
from kgym.episodes.evaluator import Evaluator  # noqa: E402
from ray_cluster import FarmEvaluator, RecordsConfig, RecordSink, SinkConfig, VerifierPool  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def farm(ray_local, tmp_path_factory):
    root = tmp_path_factory.mktemp("records")
    sink = RecordSink.remote(SinkConfig(RecordsConfig(out=str(root), run_id="svc", job_id="test", flush_rows=1)))
    with VerifierPool(cpu_pool_config(workers=1), sink=sink) as pool:
        yield pool, sink, root / "svc"
    ray.get(sink.close.remote())


def test_one_id_submitted_four_times_is_verified_once(farm):
    pool, sink, run = farm
    good, _ = good_and_wrong([400])
    before = pool.stats
    evaluator = FarmEvaluator(pool)

    async def callers():
        together = await asyncio.gather(*(evaluator.evaluate_result(good) for _ in range(3)))
        later = await evaluator.evaluate_result(good)
        return together + [later]

    results = asyncio.run(callers())
    assert {r.evaluation_id for r in results} == {good.evaluation_id}
    assert all(r.outcome == "passed" for r in results), results[0].verdict.reason
    assert len({(r.worker_id, r.started_at) for r in results}) == 1  # one verification, four answers
    after = pool.stats
    assert after.submitted - before.submitted == 1 and after.duplicates - before.duplicates == 3
    assert pool.drain() == 1  # one row, sent by the service as the result completed
    ray.get(sink.flush.remote())
    recorded = rows(run)
    assert list(recorded["evaluation_id"]).count(good.evaluation_id) == 1
    # the batch client of the same service: an id this client has not yielded comes back from the cache
    [again] = list(pool.run([good]))
    assert again.started_at == results[0].started_at and pool.stats.submitted == after.submitted


@ray.remote(num_cpus=0)
class _Episodes:
    """Stands for a rollout actor: it holds the service's handle and awaits verdicts."""

    def __init__(self, handle):
        self.evaluator = FarmEvaluator(handle)

    async def run(self, requests):
        verdicts = await asyncio.gather(*(self.evaluator.evaluate(r) for r in requests))
        return [(v.passed, v.gate, v.error) for v in verdicts]


def test_farm_evaluator_from_another_actor_and_rows_without_the_caller(farm):
    pool, sink, run = farm
    assert isinstance(FarmEvaluator(pool), Evaluator)
    good, wrong = good_and_wrong([401])
    got = ray.get(_Episodes.remote(pool.handle).run.remote([good, wrong]), timeout=300)
    assert got[0] == (True, None, None)
    assert got[1][0] is False and got[1][1] == "correctness" and got[1][2] is None
    assert pool.drain() == 2
    ray.get(sink.flush.remote())
    recorded = rows(run).set_index("evaluation_id")
    assert recorded.loc[good.evaluation_id, "outcome"] == "passed"
    assert recorded.loc[wrong.evaluation_id, "outcome"] == "failed"


def test_kept_results_are_capped_least_recently_asked_first(ray_local, tmp_path):
    # kept_results = 1: a result pushed out by a newer one is verified again when resubmitted (the
    # service does not grow for the length of an RL run); the one kept is answered at once; the
    # sink still stores one row per id.
    sink = RecordSink.remote(SinkConfig(RecordsConfig(out=str(tmp_path), run_id="lru", job_id="test", flush_rows=1)))
    a, b = good_and_wrong([402])
    with VerifierPool(cpu_pool_config(workers=1, kept_results=1), sink=sink) as pool:
        evaluator = FarmEvaluator(pool)

        async def one(request):
            return await evaluator.evaluate_result(request)

        first_a = asyncio.run(one(a))
        asyncio.run(one(b))  # pushes a's result out
        again_a = asyncio.run(one(a))
        cached_a = asyncio.run(one(a))
        stats = pool.stats
        assert stats.submitted == 3 and stats.forgotten == 2 and stats.duplicates == 1
        assert again_a.started_at != first_a.started_at  # verified again
        assert cached_a.started_at == again_a.started_at  # the kept one, answered at once
        assert again_a.outcome == first_a.outcome == "passed"
        pool.drain()
    ray.get(sink.close.remote())
    assert sorted(rows(tmp_path / "lru")["evaluation_id"]) == sorted([a.evaluation_id, b.evaluation_id])


def test_kept_results_must_be_positive():
    from ray_cluster import PoolConfig

    with pytest.raises(ValueError, match="kept_results"):
        PoolConfig(kept_results=0)
