"""`RolloutActor`: the Ray actor that owns one vLLM engine (one GPU, or several through tensor
parallelism) and serves groups of episodes: a thin shell over `kgym.rollout.rollout_core.Rollout`.

    actor = RolloutActor.options(num_gpus=1).remote(config, "kgym-farm")   # the farm service's name
    groups = ray.get(actor.rollout.remote(tasks))
    ray.get(actor.load_adapter.remote(version, adapter_dir))                  # after each learner step

It is an async actor: `rollout` calls from the driver run concurrently on the actor's event loop,
their episodes interleaved over one engine, and each submission awaits the farm while others
generate. The evaluator is given as the farm service's actor name (or a `FarmService` handle) and
built inside the actor (`ray_cluster.farm_evaluator.FarmEvaluator`), or as any picklable evaluator.

Placement: `num_gpus=1` by default; a CPU engine (vLLM's CPU build) uses `.options(num_gpus=0)`.
For tensor parallelism over k GPUs set `EngineConfig.tensor_parallel_size=k` and give the actor a
placement group of k GPU bundles (vLLM starts its workers in it); not run here. `max_restarts=0`: an
engine that died lost nothing durable (adapters are on disk); the driver restarts the actor and
reloads the latest adapter. Does not cover: scoring, advantages, records, the driver's loop.
"""

from __future__ import annotations

from typing import Any

import ray

from kgym.contract import Mode
from kgym.rollout.engine import SleepOutcome
from kgym.rollout.rollout_core import Rollout, RolloutConfig
from kgym.rollout.sampling import SamplingConfig
from kgym.tasks.task import Task


def _evaluator(evaluator: Any):
    if isinstance(evaluator, str) or hasattr(evaluator, "submit"):
        from ray_cluster.farm_evaluator import FarmEvaluator

        return FarmEvaluator(evaluator)
    return evaluator


@ray.remote(num_gpus=1, max_restarts=0, max_task_retries=0)
class RolloutActor:
    def __init__(self, config: RolloutConfig, evaluator: Any) -> None:
        self._core = Rollout(config, _evaluator(evaluator))

    async def rollout(self, tasks: list[Task], group_ids: list[str] | None = None,
                      modes: list[Mode | str] | None = None, group_size: int | None = None):
        return await self._core.rollout(tasks, group_ids=group_ids, modes=modes, group_size=group_size)

    async def generate(self, prompts: list[list[int]], sampling: SamplingConfig | None = None,
                       seeds: list[int | None] | None = None):
        return self._core.generate(prompts, sampling, seeds=seeds)

    async def load_adapter(self, version: int, path: str) -> dict[str, Any]:
        return self._core.load_adapter(version, path)

    async def policy_version(self) -> int:
        return self._core.policy.version

    async def sleep(self, level: int = 1) -> SleepOutcome:
        return self._core.sleep(level)

    async def wake(self) -> SleepOutcome:
        return self._core.wake()

    async def stats(self) -> dict[str, Any]:
        return self._core.stats()
