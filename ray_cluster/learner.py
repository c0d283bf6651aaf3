"""`LearnerActor`: the Ray actor that owns the policy being trained (one GPU) and runs CISPO steps.

A thin shell over `kgym.training.learner_core.Learner` (which holds the model, the adapters, the
optimizer and the checkpoints, and is used without a Ray runtime in tests and benchmarks). The
controller drives it: `step(TrainBatch) -> StepMetrics`, then hands `adapter_dir()` of the new
`policy_version` to the rollout actor under a fresh LoRA id. Order of events for the controller:
step returns after the optimizer step (and after the checkpoint of that step, when one is due);
to reuse a rollout batch for k steps, call `with_old_logprobs` once and `step` k times;
`save()` writes the current version's adapter for the sampler; nothing here calls back.

Placement: `num_gpus=1` by default (`LearnerActor.options(num_gpus=0)` for a CPU learner); Ray sets
CUDA_VISIBLE_DEVICES, so `device="auto"` is the actor's GPU. `max_restarts=0`: a learner that died
lost its optimizer state since the last checkpoint; the controller restarts it from `resume`.

Does not cover: sampling, rewards, the controller's loop.
"""

from __future__ import annotations

from pathlib import Path

import ray

from kgym.rl import TrainBatch
from kgym.training.learner_core import Learner, LearnerConfig, StepMetrics, latest_checkpoint


@ray.remote(num_gpus=1, max_restarts=0, max_task_retries=0)
class LearnerActor:
    def __init__(self, config: LearnerConfig, resume_from: str | None = None) -> None:
        """`resume_from`: a checkpoint directory, or "latest" for the newest under config.checkpoint_dir."""
        self._learner = Learner(config)
        if resume_from == "latest":
            found = latest_checkpoint(config.checkpoint_dir) if config.checkpoint_dir else None
            resume_from = str(found) if found else None
        if resume_from is not None:
            self._learner.resume(resume_from)

    def step(self, batch: TrainBatch) -> StepMetrics:
        return self._learner.step(batch)

    def with_old_logprobs(self, batch: TrainBatch) -> TrainBatch:
        """Fill missing old log-probs once, before reusing `batch` for several steps."""
        return self._learner.with_old_logprobs(batch)

    def save(self, root: str | None = None) -> str:
        """Write a checkpoint now (under `root`, default config.checkpoint_dir); returns its path."""
        target = root or self._learner.config.checkpoint_dir
        if target is None:
            raise ValueError("no checkpoint_dir configured and no root given")
        return str(self._learner.save_checkpoint(target))

    def release_memory(self) -> dict[str, float]:
        """Hand the CUDA caching allocator's free blocks back to the device (colocated mode: before the
        engine wakes up on the same GPU); returns the GiB still reserved and allocated."""
        import gc

        import torch

        gc.collect()
        if not torch.cuda.is_available():
            return {"reserved_gib": 0.0, "allocated_gib": 0.0}
        torch.cuda.empty_cache()
        return {"reserved_gib": torch.cuda.memory_reserved() / 2**30,
                "allocated_gib": torch.cuda.memory_allocated() / 2**30}

    def save_adapter(self, root: str) -> str:
        """Write only the current version's adapter under `root` (for the sampler); returns its directory."""
        return str(self._learner.save_adapter(root))

    def adapter_dir(self, checkpoint: str) -> str:
        """The directory to give vLLM (`LoRARequest(name, id, path)`) or peft for a checkpoint."""
        return str(Path(checkpoint) / "adapter")

    def policy_version(self) -> int:
        return self._learner.policy_version

    def step_count(self) -> int:
        return self._learner.step_count
