"""Where the RL job's actors go: the rollout engines, the learner and the farm's verifier workers,
planned against the cluster's GPUs before anything is started.

Modes (`[placement] mode`):
- `colocated`: everything on one GPU, the study's mode. Ray's GPU shares are fractions of that one
  GPU (the engine 0.5, the learner 0.25, one verifier worker 0.25: logical shares, so Ray puts the
  three on one device); GPU *memory* is split by `[engine] gpu_memory_utilization` (what vLLM
  takes while awake) and by vLLM's sleep mode (`[engine] sleep_level`, 1 by default here): the
  engine sleeps while the learner steps and wakes before the adapter sync. One rollout actor, no
  tensor parallelism.
- `split`: each rollout actor takes `[engine] gpus` (x `tensor_parallel_size` when that is more),
  the learner `[learner] gpus` (a fraction shares a GPU), and the farm the whole GPUs left
  (`[farm] workers` caps it); at least one worker is needed.
- `cpu`: nothing asks for a GPU (`[engine] gpus = 0` and `[learner] gpus = 0`): vLLM's CPU build,
  a CPU learner, CPU verifier workers.
- `auto` (the default): `cpu` when engine and learner ask for no GPU; `split` when the cluster has
  the GPUs split asks for plus one for the farm; else `colocated` when it has at least one GPU.

`plan_placement(config, cluster_gpus)` is a plain function: it returns a `Placement` or raises
`ConfigError` saying what does not fit and what to set, so the job never waits on resources the
cluster cannot give (issue: a farm taking every GPU left the learner's `ray.get` waiting forever).
Does not start actors (`jobs/rl.py` does, with `Placement`'s shares) and does not place workers on
nodes (`ray_cluster/placement.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from jobs.sections import ConfigError

if TYPE_CHECKING:
    from jobs.rl_config import RLJobConfig
    from kgym.rollout.engine import EngineConfig

# Colocated shares of the one GPU (Ray's logical accounting; memory is vLLM's utilization + sleep).
COLOCATED_ENGINE_SHARE = 0.5
COLOCATED_LEARNER_SHARE = 0.25
COLOCATED_WORKER_SHARE = 0.25


class PlacementMode(StrEnum):
    AUTO = "auto"
    COLOCATED = "colocated"
    SPLIT = "split"
    CPU = "cpu"


@dataclass(frozen=True)
class Placement:
    mode: PlacementMode
    engine_gpus: float  # Ray GPU share of each rollout actor
    engine_actors: int
    learner_gpus: float
    farm_workers: int | None  # None: the farm's own rule (one per CPU slot on a CPU cluster)
    farm_gpus_per_worker: float  # 0 on a CPU farm
    sleep_level: int  # 0: the engine stays awake while the learner steps

    @property
    def gpus(self) -> float:
        return (self.engine_gpus * self.engine_actors + self.learner_gpus
                + (self.farm_workers or 0) * self.farm_gpus_per_worker)

    def describe(self) -> str:
        farm = ("CPU workers" if not self.farm_gpus_per_worker
                else f"{self.farm_workers} verifier worker(s) x {self.farm_gpus_per_worker:g} GPU")
        sleep = f", engine sleeps (level {self.sleep_level}) while the learner steps" if self.sleep_level else ""
        return (f"{self.mode}: {self.engine_actors} rollout actor(s) x {self.engine_gpus:g} GPU, learner "
                f"{self.learner_gpus:g} GPU, {farm}{sleep} ({self.gpus:g} GPUs asked for)")


def _engine_gpus(engine: EngineConfig) -> float:
    tp = int(engine.tensor_parallel_size)
    return float(max(engine.gpus, tp)) if engine.gpus else 0.0


def plan_placement(config: RLJobConfig, cluster_gpus: float) -> Placement:
    """`config`: an `RLJobConfig`; `cluster_gpus`: `ray.cluster_resources()["GPU"]` (0 without)."""
    e, learner, farm = config.engine, config.learner, config.farm
    mode = PlacementMode(config.placement.mode)
    wants_gpu = bool(e.gpus) or bool(learner.gpus)
    if mode is PlacementMode.AUTO:
        if not wants_gpu:
            mode = PlacementMode.CPU
        elif cluster_gpus >= _engine_gpus(e) * e.actors + learner.gpus + 1:
            mode = PlacementMode.SPLIT
        elif cluster_gpus >= 1:
            mode = PlacementMode.COLOCATED
        else:
            raise ConfigError(
                f"[placement]: the rollout engine ([engine] gpus = {e.gpus:g}) and the learner ([learner] gpus = "
                f"{learner.gpus:g}) ask for GPUs, but the Ray cluster has none: run on a GPU cluster, or set "
                f"engine.gpus=0, learner.gpus=0, learner.device=\"cpu\" for a CPU run (jobs/configs/rl_tiny.toml)")
    if mode is PlacementMode.CPU:
        if wants_gpu:
            raise ConfigError(f"[placement] mode = \"cpu\", but [engine] gpus = {e.gpus:g} and [learner] gpus = "
                              f"{learner.gpus:g}: set both to 0 for a CPU run")
        return Placement(mode, 0.0, e.actors, 0.0, farm.workers, 0.0, 0)
    if mode is PlacementMode.COLOCATED:
        if cluster_gpus < 1:
            raise ConfigError(f"[placement] mode = \"colocated\" needs one GPU; the Ray cluster has {cluster_gpus:g}")
        if e.actors != 1 or e.tensor_parallel_size != 1:
            raise ConfigError(f"[placement] mode = \"colocated\" runs one engine on one GPU: set engine.actors=1 and "
                              f"engine.tensor_parallel_size=1 (now {e.actors} and {e.tensor_parallel_size}), or use "
                              f"mode=\"split\" on more GPUs")
        if farm.workers not in (None, 1):
            raise ConfigError(f"[placement] mode = \"colocated\" has one verifier worker on the shared GPU; "
                              f"[farm] workers = {farm.workers}: leave it unset or use mode=\"split\"")
        return Placement(mode, COLOCATED_ENGINE_SHARE, 1, COLOCATED_LEARNER_SHARE, 1, COLOCATED_WORKER_SHARE,
                         e.sleep_level_for(colocated=True))
    # split
    engines = _engine_gpus(e) * e.actors
    if e.gpus and e.gpus != int(e.gpus) and e.tensor_parallel_size > 1:
        raise ConfigError("[engine]: a tensor-parallel engine takes whole GPUs: set engine.gpus to an integer")
    left = cluster_gpus - engines - learner.gpus
    room = math.floor(left + 1e-9)
    workers = room if farm.workers is None else farm.workers
    if workers < 1 or workers > room:
        raise ConfigError(
            f"[placement] mode = \"split\": the Ray cluster has {cluster_gpus:g} GPUs; the rollout actors take "
            f"{engines:g} ({e.actors} x {_engine_gpus(e):g}), the learner {learner.gpus:g}, which leaves {room} whole "
            f"GPU(s) for the farm; it needs {max(1, workers)}. Lower engine.actors/engine.gpus/learner.gpus or "
            f"farm.workers, add GPUs, or use mode=\"colocated\" (everything on one GPU)")
    return Placement(PlacementMode.SPLIT, _engine_gpus(e), e.actors, float(learner.gpus), workers, 1.0,
                     e.sleep_level_for(colocated=False))


__all__ = ["Placement", "PlacementMode", "plan_placement"]
