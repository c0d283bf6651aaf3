"""The RL job's placement: planned against the cluster's GPUs before any actor starts.

On main 4b45def the farm took one worker per GPU and the learner and rollout actors then asked for a
whole GPU each: on a one-GPU machine `ray.get` waited forever. Now one GPU is colocated (fractional
shares summing to one GPU, the engine sleeping while the learner steps), several GPUs are split, and a
plan the cluster cannot hold is a ConfigError naming what to change. The last test starts real Ray
actors with the colocated shares on a one-GPU (declared) local cluster: all three fit at once.
"""

from __future__ import annotations

import json

import pytest

from jobs.rl_config import load_config
from jobs.rl_placement import PlacementMode, decide_sleep, out_of_memory_sleep, plan_placement
from jobs.sections import ConfigError
from kgym.training.device_memory import GpuMemory

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


# ---- sleep or not, colocated: decided from the memory (issue 28's step target) -------------------

QWEN_7B = dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
               num_key_value_heads=4, vocab_size=152064, tie_word_embeddings=False)
H200_GIB, H100_GIB = 140.4, 79.6  # what nvidia-smi reports (143,771 and 81,559 MiB)


@pytest.fixture
def model_7b(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(QWEN_7B))
    return f'model="{tmp_path}"'


def test_the_7b_learner_fits_beside_the_awake_engine_on_an_h200(model_7b):
    """jobs/configs/rl_h200.toml at the 7B shape: vLLM 0.45 x 140 GiB + the learner + the verifier fit,
    so the engine stays awake (no 15 GB copy to host memory each step), the engine is built without
    sleep mode, and the plan says why with its numbers."""
    asked = []
    config = load_config("jobs/configs/rl_h200.toml", [model_7b])
    p = plan_placement(config, 1, lambda: asked.append(1) or GpuMemory(H200_GIB))
    assert p.mode is PlacementMode.COLOCATED and p.sleep_level == 0 and asked == [1]
    assert p.memory.engine_gib == pytest.approx(0.45 * H200_GIB) and 10 < p.memory.learner_gib < 20
    assert p.memory.needed_gib < H200_GIB
    assert not config.rollout_config(p).engine.sleep_mode
    text = p.describe()
    assert "stays awake" in text and "fits beside" in text and "of the GPU's 140.4" in text, text
    record = json.loads(json.dumps(p.to_dict()))  # the attempt record's form
    assert record["sleep_level"] == 0 and record["memory"]["gpu_gib"] == H200_GIB and record["mode"] == "colocated"


@pytest.mark.parametrize("gpu_gib, level", [(H200_GIB, 0), (H100_GIB, 0), (48.0, 1), (24.0, 1)])
def test_the_engine_sleeps_only_where_the_learner_does_not_fit(model_7b, gpu_gib, level):
    p = plan_placement(load_config("jobs/configs/rl_h200.toml", [model_7b]), 1, lambda: GpuMemory(gpu_gib))
    assert p.sleep_level == level, p.describe()
    assert ("does not fit" in p.sleep_reason) == bool(level)


def test_more_engine_memory_can_tip_it_into_sleeping(model_7b):
    p = plan_placement(cfg(model_7b, "engine.gpu_memory_utilization=0.8"), 1, lambda: GpuMemory(H100_GIB))
    assert p.sleep_level == 1 and "does not fit" in p.sleep_reason
    big = plan_placement(cfg(model_7b, "engine.gpu_memory_utilization=0.8"), 1, lambda: GpuMemory(H200_GIB))
    assert big.sleep_level == 0


def test_unknown_memory_keeps_the_engine_sleeping(model_7b):
    """No answer from the GPU, or no config.json to estimate the learner from: the earlier behaviour."""
    p = plan_placement(cfg(model_7b), 1, lambda: None)
    assert p.sleep_level == 1 and "unknown" in p.sleep_reason
    p = plan_placement(cfg(), 1, lambda: GpuMemory(H200_GIB))  # /models/x has no config.json
    assert p.sleep_level == 1 and "config.json" in p.sleep_reason
    assert plan_placement(cfg(model_7b), 1).sleep_level == 1  # no probe given


def test_the_setting_wins_and_the_gpu_is_not_asked(model_7b):
    asked = []
    probe = lambda: asked.append(1) or GpuMemory(H200_GIB)  # noqa: E731
    assert plan_placement(cfg(model_7b, "engine.sleep_level=1"), 1, probe).sleep_level == 1
    assert asked == []
    p = plan_placement(cfg(model_7b, "engine.sleep_level=0", "placement.gpu_memory_gib=24"), 1, probe)
    assert p.sleep_level == 0 and "does not fit" in p.sleep_reason and "out of memory" in p.sleep_reason
    # the configured memory replaces the probe
    p = plan_placement(cfg(model_7b, "placement.gpu_memory_gib=140", "placement.farm_memory_gib=16"), 1, probe)
    assert p.sleep_level == 0 and p.memory.farm_gib == 16 and asked == []


def test_decide_sleep_arithmetic():
    d = decide_sleep(None, GpuMemory(100.0), 0.5, 30.0, 8.0, headroom_gib=4.0)
    assert d.level == 0 and d.needed_gib == pytest.approx(92.0)
    assert decide_sleep(None, GpuMemory(100.0), 0.5, 39.0, 8.0, headroom_gib=4.0).level == 1  # 101 > 100
    assert decide_sleep(2, GpuMemory(100.0), 0.5, 1.0, 1.0).level == 2


def test_memory_other_processes_hold_counts_against_the_fit(model_7b):
    """Issue 28's first overlapped 7B run on an H100: the benchmark's own process kept ~30 GiB of the
    GPU's cache from building the model; the engine stayed awake by the total and the learner's first
    matmul failed (CUBLAS_STATUS_ALLOC_FAILED). What is in use before the job starts is not free."""
    assert decide_sleep(None, GpuMemory(100.0, 9.0), 0.5, 30.0, 8.0, headroom_gib=4.0).level == 1  # 92 > 91
    d = decide_sleep(None, GpuMemory(100.0, 7.0), 0.5, 30.0, 8.0, headroom_gib=4.0)
    assert d.level == 0 and d.engine_gib == pytest.approx(50.0)  # vLLM's share is of the total
    assert d.free_gib == pytest.approx(93.0) and "7.0 of it in use by other processes" in d.reason
    p = plan_placement(load_config("jobs/configs/rl_h200.toml", [model_7b]), 1, lambda: GpuMemory(H100_GIB, 30.0))
    assert p.sleep_level == 1 and "does not fit" in p.sleep_reason and "30.0 of it in use" in p.sleep_reason
    record = json.loads(json.dumps(p.to_dict()))
    assert record["memory"]["in_use_gib"] == 30.0


CUBLAS = ("learner step 1: RayTaskError(RuntimeError): ^^^^^\nRuntimeError: CUDA error: "
          "CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")


def test_running_out_of_memory_awake_puts_the_engine_to_sleep(model_7b):
    """Awake by the estimate and out of memory: the retry sleeps (and so runs synchronously). Set by the
    user, or another error, or already asleep: the placement is kept."""
    awake = plan_placement(load_config("jobs/configs/rl_h200.toml", [model_7b]), 1, lambda: GpuMemory(H100_GIB))
    assert awake.sleep_level == 0
    slept = out_of_memory_sleep(awake.memory, CUBLAS)
    assert slept is not None and slept.level == 1
    assert "ran out of memory" in slept.reason and "CUBLAS_STATUS_ALLOC_FAILED" in slept.reason
    assert "fits beside" in slept.reason  # what was decided before, kept in the reason
    assert out_of_memory_sleep(awake.memory, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate") \
        is not None
    assert out_of_memory_sleep(awake.memory, "learner step 1: timed out after 600 s") is None
    assert out_of_memory_sleep(slept, CUBLAS) is None  # already sleeping
    forced = plan_placement(cfg(model_7b, "engine.sleep_level=0", "placement.gpu_memory_gib=140"), 1)
    assert forced.sleep_level == 0 and out_of_memory_sleep(forced.memory, CUBLAS) is None  # the user's setting

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


def test_the_job_retries_an_out_of_memory_step_asleep_and_synchronous(model_7b):
    """The controller's side of it (no Ray needed to build one): the placement the retry starts its
    actors with sleeps, the overlap falls back, and the log says why."""
    from jobs.rl import RLController

    config = load_config("jobs/configs/rl_h200.toml", [model_7b, "offpolicy.overlap=true"])
    awake = plan_placement(config, 1, lambda: GpuMemory(H100_GIB))
    lines: list[str] = []
    controller = RLController(config, lines.append, awake)
    assert controller.overlap.on
    controller._sleep_after_out_of_memory("learner step 1: timed out")  # not a memory error: kept
    assert controller.placement.sleep_level == 0 and lines == []
    controller._sleep_after_out_of_memory(CUBLAS)
    assert controller.placement.sleep_level == 1 and not controller.overlap.on
    assert config.rollout_config(controller.placement).engine.sleep_mode
    assert len(lines) == 1 and "sleeps (level 1)" in lines[0] and "ran out of memory" in lines[0]


def test_the_probe_reads_total_and_used_from_nvidia_smi(tmp_path, monkeypatch):
    """The Ray task's body (no Ray here): nvidia-smi's two columns in MiB, as bytes; None when it fails."""
    from kgym.training import device_memory as gpu_memory

    tool = tmp_path / "nvidia-smi"
    tool.write_text("#!/bin/sh\necho '81559, 30720'\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert gpu_memory.read_memory_bytes() == (81559 * 2**20, 30720 * 2**20)
    tool.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed'\nexit 9\n")
    assert gpu_memory._nvidia_smi("0") is None
