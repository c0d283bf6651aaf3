"""LearnerActor on an embedded Ray (one GPU declared on the CPU, as the farm tests do): a step's metrics
and a checkpoint come back through Ray, and the adapter directory it names exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgym.rl import Sample, TrainBatch

ray = pytest.importorskip("ray")
pytest.importorskip("peft")


@pytest.mark.slow
def test_actor_steps_and_checkpoints(tiny_dir, tmp_path):
    from kgym.training.learner_core import LearnerConfig, StepStatus
    from ray_cluster.learner import LearnerActor

    if ray.is_initialized():  # an earlier test's Ray (a full run leaves one up): this test needs its own GPU
        ray.shutdown()
    try:
        ray.init(address="local", num_cpus=1, num_gpus=1, object_store_memory=100 * 2**20, include_dashboard=False,
                 log_to_driver=False, runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
    except Exception as exc:  # Ray waits a fixed 30 s for its raylet; an overloaded machine is not a learner bug
        if "timed out during startup" not in str(exc):
            raise
        ray.shutdown()
        pytest.skip(f"Ray did not start on this machine: {exc}")
    try:
        cfg = LearnerConfig(model_path=str(tiny_dir), quantize_4bit=False, compute_dtype="float32",
                            checkpoint_dir=str(tmp_path / "ckpt"), checkpoint_every=1)
        actor = LearnerActor.options(num_cpus=0).remote(cfg)  # takes the declared GPU; runs on the CPU
        batch = TrainBatch(tuple(Sample(prompt_ids=[5, 6, 7], completion_ids=[8 + i, 9, 10], loss_mask=[1, 0, 1],
                                        group_id="g", reward=float(i)) for i in range(4)))
        m = ray.get(actor.step.remote(batch), timeout=120)
        assert m.status is StepStatus.OK and m.policy_version == 1 and m.checkpoint is not None
        adapter = Path(ray.get(actor.adapter_dir.remote(m.checkpoint)))
        assert (adapter / "adapter_model.safetensors").is_file()
        assert ray.get(actor.policy_version.remote()) == 1
    finally:
        ray.shutdown()
