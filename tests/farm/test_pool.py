"""The pool's reliability on an embedded Ray (CPU workers; the session declares 2 GPUs for placement).

- one verifier actor per GPU: placement with num_gpus=1 gives each worker its own GPU id;
- a worker killed in the middle of a batch: every evaluation id ends with exactly one result and the
  worker is replaced;
- crash, hang and out-of-memory candidates interleaved with good ones: every good one passes, the
  hostile ones get their verdicts, no worker is replaced and nothing is retried (a kernel's failure
  is a verdict, never a farm failure);
- a poisoned worker (its verifier pointed at a device that cannot compute) is caught by the health
  probe and recycled, and the evaluations it broke are retried elsewhere as real verdicts.
"""

from __future__ import annotations

import collections

import pytest
import torch

from farm_helpers import cpu_pool_config, good_and_wrong, hostile

ray = pytest.importorskip("ray")
from ray_cluster import PoolConfig, VerifierPool, WorkerConfig  # noqa: E402

pytestmark = pytest.mark.slow


def _by_id(results):
    counts = collections.Counter(r.evaluation_id for r in results)
    assert all(n == 1 for n in counts.values()), counts
    return {r.evaluation_id: r for r in results}


def test_one_worker_per_gpu_each_with_its_own_device(ray_local):
    # The session declared 2 GPUs on this CPU machine: Ray hands each worker one of them (and sets
    # CUDA_VISIBLE_DEVICES); the verifier itself runs on the CPU here.
    with VerifierPool(PoolConfig(worker=WorkerConfig(device="cpu", spares=0))) as pool:
        assert pool.gpu and pool.num_workers == 2
        ids = [ray.get(pool.actor(w).__ray_call__.remote(lambda self: ray.get_gpu_ids())) for w in pool.worker_ids()]
        assert sorted(len(i) for i in ids) == [1, 1] and ids[0] != ids[1], ids


@pytest.fixture(scope="module")
def pool(ray_local):
    with VerifierPool(cpu_pool_config(workers=2, probe_interval_s=5.0, probe_timeout_s=60.0)) as p:
        yield p


def test_killed_worker_is_replaced_and_nothing_is_lost(pool):
    requests = good_and_wrong(range(100, 104))
    requests.append(requests[0])  # a duplicate id: run once
    victim = pool.worker_ids()[0]
    replaced_before = pool.stats.replaced
    results = []
    for r in pool.run(requests):
        results.append(r)
        if len(results) == 1:
            ray.kill(pool.actor(victim), no_restart=True)
    by_id = _by_id(results)
    assert set(by_id) == {r.evaluation_id for r in requests}
    for req in requests:
        r = by_id[req.evaluation_id]
        assert r.outcome == ("passed" if req.label == "solution" else "failed"), (req.label, r.verdict.reason)
    assert pool.stats.replaced > replaced_before
    assert victim not in pool.worker_ids()
    assert any("died" in why for why in pool.stats.replaced_why)


def test_hostile_candidates_are_verdicts_and_leave_other_workers_alone(pool):
    good = good_and_wrong(range(200, 203))[::2]  # solutions only
    bad = [hostile("infinite_loop", timeout_s=5.0), hostile("huge_allocation"), hostile("torch_fallback"),
           hostile("exit_process")]
    requests = [good[0], bad[0], good[1], bad[1], bad[2], good[2], bad[3]]
    replaced, retried = pool.stats.replaced, pool.stats.retried
    by_id = _by_id(list(pool.run(requests)))
    for g in good:
        assert by_id[g.evaluation_id].outcome == "passed", by_id[g.evaluation_id].verdict.reason
    expected = {"infinite_loop": "timeout", "huge_allocation": "crash", "torch_fallback": "isolation",
                "exit_process": "policy"}
    for b in bad:
        r = by_id[b.evaluation_id]
        assert (r.outcome, r.verdict.gate, r.attempts) == ("failed", expected[b.label], 1), r.verdict.reason
    assert pool.stats.replaced == replaced and pool.stats.retried == retried
    assert all(h.ok for h in pool.health())


def test_poisoned_worker_is_detected_and_recycled(pool):
    victim = pool.worker_ids()[1]
    actor = pool.actor(victim)
    assert ray.get(actor.health.remote()).ok

    def poison(self):  # the device goes bad under the verifier (what a wedged CUDA context looks like)
        self.verifier.device = torch.device("meta")

    ray.get(actor.__ray_call__.remote(poison))
    probe = ray.get(actor.health.remote())
    assert not probe.ok and "meta" in probe.problems[0]
    requests = good_and_wrong(range(300, 303))
    by_id = _by_id(list(pool.run(requests)))
    assert victim not in pool.worker_ids()
    assert any(why.startswith(victim) and "unhealthy" in why for why in pool.stats.replaced_why), \
        pool.stats.replaced_why
    for req in requests:  # whatever the poisoned worker broke was retried on a healthy one
        r = by_id[req.evaluation_id]
        assert r.outcome == ("passed" if req.label == "solution" else "failed"), r.verdict.error
    assert all(h.ok for h in pool.health())
