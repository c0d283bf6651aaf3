"""RolloutActor on an embedded Ray with vLLM's CPU build: groups come back through Ray, an adapter
sync gives the next version a fresh id, and the engine's stats are readable. Skipped without vLLM;
skips (saying why) when Ray's raylet misses its fixed startup wait on an overloaded machine."""

from __future__ import annotations

import pytest
from rollout_helpers import requires_vllm

from kgym.contract import Mode
from kgym.episodes.env import EpisodeConfig
from kgym.rollout.engine import EngineConfig
from kgym.rollout.sampling import SamplingConfig
from kgym.tasks import make

ray = pytest.importorskip("ray")
pytestmark = [requires_vllm, pytest.mark.slow]


def test_actor_rollout_and_adapter_sync(tiny_dir, adapters):
    from kgym.rollout.rollout_core import RolloutConfig
    from ray_cluster.rollout import RolloutActor

    class NoEvaluations:  # local, so Ray pickles it by value; the random model submits nothing
        async def evaluate(self, request):  # pragma: no cover
            raise AssertionError("unexpected submission")

    try:
        ray.init(address="local", num_cpus=2, object_store_memory=200 * 2**20, include_dashboard=False,
                 log_to_driver=False, runtime_env={"env_vars": {"VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1"}})
    except Exception as exc:
        if "timed out during startup" not in str(exc):
            raise
        ray.shutdown()
        pytest.skip(f"Ray did not start on this machine: {exc}")
    try:
        cfg = RolloutConfig(engine=EngineConfig(model=str(tiny_dir), max_model_len=4096, max_num_seqs=8,
                                                enforce_eager=True),
                            sampling=SamplingConfig(temperature=1.0, max_tokens=8, seed=1),
                            episode=EpisodeConfig(group_size=2))  # a Rollout's groups are its episodes' size
        actor = RolloutActor.options(num_gpus=0, num_cpus=0).remote(cfg, NoEvaluations())
        tasks = [make("relu-v1", seed=1, size="tiny"), make("relu-v1", seed=2, size="tiny")]
        groups = ray.get(actor.rollout.remote(tasks, modes=[Mode.SINGLE, Mode.SINGLE]), timeout=400)
        assert [len(g.episodes) for g in groups] == [2, 2]
        assert all(e.result is not None and e.policy_versions == (0,) for g in groups for e in g.episodes)
        sync = ray.get(actor.load_adapter.remote(1, str(adapters[0])), timeout=120)
        assert (sync["version"], sync["lora_id"]) == (1, 1)
        (row,) = ray.get(actor.generate.remote([[5, 6, 7]], SamplingConfig(temperature=0.0, max_tokens=4,
                                                                               group_size=1)), timeout=120)
        assert row[0].policy_version == 1 and row[0].lora_id == 1 and len(row[0].logprobs) == len(row[0].token_ids)
        stats = ray.get(actor.stats.remote())
        assert stats["policy_version"] == 1 and stats["requests"] == 4 and stats["engine_start_seconds"] > 0
        assert not ray.get(actor.sleep.remote()).ok  # CPU build: refused, with the reason
    finally:
        ray.shutdown()
