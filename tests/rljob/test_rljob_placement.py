"""The RL job's placement: planned against the cluster's GPUs before any actor starts.

On main 4b45def the farm took one worker per GPU and the learner and rollout actors then asked for a
whole GPU each: on a one-GPU machine `ray.get` waited forever. Now one GPU is colocated (fractional
shares summing to one GPU, the engine sleeping while the learner steps), several GPUs are split, and a
plan the cluster cannot hold is a ConfigError naming what to change. The last test starts real Ray
actors with the colocated shares on a one-GPU (declared) local cluster: all three fit at once.
"""

from __future__ import annotations

import pytest

from jobs.rl_config import load_config
from jobs.rl_placement import PlacementMode, plan_placement
from jobs.sections import ConfigError

MODEL = 'model="/models/x"'


def cfg(*overrides: str):
    return load_config(None, [MODEL, *overrides])


def test_one_gpu_is_colocated_and_fits():
    p = plan_placement(cfg(), 1)
    assert p.mode is PlacementMode.COLOCATED
    assert p.gpus <= 1.0 + 1e-9, p.describe()
    assert (p.engine_actors, p.farm_workers, p.sleep_level) == (1, 1, 1)
    assert 0 < p.engine_gpus < 1 and 0 < p.learner_gpus < 1 and 0 < p.farm_gpus_per_worker < 1
    rc = cfg().rollout_config(p)
    assert rc.engine.sleep_mode and rc.engine.gpu_memory_utilization < 0.6  # room for the learner and a worker


def test_colocated_without_sleep_is_allowed():
    p = plan_placement(cfg("engine.sleep_level=0"), 1)
    assert p.mode is PlacementMode.COLOCATED and p.sleep_level == 0
    assert not cfg("engine.sleep_level=0").rollout_config(p).engine.sleep_mode


def test_enough_gpus_split():
    p = plan_placement(cfg(), 8)
    assert p.mode is PlacementMode.SPLIT
    assert (p.engine_gpus, p.learner_gpus, p.farm_workers, p.farm_gpus_per_worker) == (1, 1, 6, 1)
    assert p.sleep_level == 0 and p.gpus == 8
    assert cfg().rollout_config(p).engine.gpu_memory_utilization == 0.85


def test_split_with_tensor_parallel_and_a_fractional_learner():
    p = plan_placement(cfg("engine.tensor_parallel_size=2", "engine.actors=2", "learner.gpus=0.5"), 8)
    assert p.mode is PlacementMode.SPLIT and p.engine_gpus == 2 and p.farm_workers == 3  # 8 - 4 - 0.5 -> 3 whole
    assert cfg("engine.tensor_parallel_size=2").rollout_config(p).engine.tensor_parallel_size == 2


def test_three_gpus_split_with_one_worker():
    p = plan_placement(cfg(), 3)
    assert p.mode is PlacementMode.SPLIT and p.farm_workers == 1


def test_two_gpus_auto_is_colocated_not_a_hang():
    # engine 1 + learner 1 leave no GPU for the farm: auto colocates instead of waiting on a third
    assert plan_placement(cfg(), 2).mode is PlacementMode.COLOCATED


@pytest.mark.parametrize("overrides, gpus, words", [
    (['placement.mode="split"'], 1, ["split", "1 GPUs", "farm", "colocated"]),
    (['placement.mode="split"', "farm.workers=4"], 4, ["leaves 2", "needs 4"]),
    (['placement.mode="colocated"'], 0, ["colocated", "one GPU", "has 0"]),
    (['placement.mode="colocated"', "engine.actors=2"], 1, ["engine.actors=1"]),
    (['placement.mode="colocated"', "farm.workers=2"], 1, ["farm", "workers = 2"]),
    ([], 0, ["no", "GPU", "engine.gpus=0"]),
    (['placement.mode="cpu"'], 0, ["cpu", "set both to 0"]),
])
def test_what_does_not_fit_is_refused_before_anything_starts(overrides, gpus, words):
    with pytest.raises(ConfigError) as e:
        plan_placement(cfg(*overrides), gpus)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_cpu_run():
    p = plan_placement(cfg("engine.gpus=0", "learner.gpus=0", "farm.workers=2"), 0)
    assert p.mode is PlacementMode.CPU and p.gpus == 0 and p.farm_workers == 2 and p.sleep_level == 0
    assert not cfg("engine.gpus=0").rollout_config(p).engine.sleep_mode


def test_colocated_shares_schedule_together_on_one_gpu():
    """Real Ray: a local instance declaring one GPU holds an engine-, a learner- and a worker-sized
    actor at the same time (the three shares of the plan), and a fourth whole-GPU actor does not fit."""
    ray = pytest.importorskip("ray")
    from ray.exceptions import GetTimeoutError

    p = plan_placement(cfg(), 1)

    @ray.remote(num_cpus=0)
    class Holder:
        def gpu_ids(self):
            return ray.get_gpu_ids()

    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, num_gpus=1, include_dashboard=False)
    try:
        held = [Holder.options(num_gpus=g).remote() for g in (p.engine_gpus, p.learner_gpus, p.farm_gpus_per_worker)]
        ids = ray.get([h.gpu_ids.remote() for h in held], timeout=60)
        assert len({tuple(i) for i in ids}) == 1  # one device for all three
        extra = Holder.options(num_gpus=0.01).remote()
        with pytest.raises(GetTimeoutError):
            ray.get(extra.gpu_ids.remote(), timeout=3)
        for h in [*held, extra]:
            ray.kill(h)
    finally:
        if started:
            ray.shutdown()
