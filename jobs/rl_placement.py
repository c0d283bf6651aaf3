"""Where the RL job's actors go: the rollout engines, the learner and the farm's verifier workers,
planned against the cluster's GPUs before anything is started.

Modes (`[placement] mode`):
- `colocated`: everything on one GPU, the study's mode. Ray's GPU shares are fractions of that one
  GPU (the engine 0.5, the learner 0.25, one verifier worker 0.25: logical shares, so Ray puts the
  three on one device); GPU *memory* is split by `[engine] gpu_memory_utilization` (what vLLM
  takes while awake) and by vLLM's sleep mode: the engine sleeps while the learner steps and wakes
  before the adapter sync, unless the learner fits beside the awake engine (`decide_sleep`, below).
  One rollout actor, no tensor parallelism.
- `split`: each rollout actor takes `[engine] gpus` (x `tensor_parallel_size` when that is more),
  the learner `[learner] gpus` (a fraction shares a GPU), and the farm the whole GPUs left
  (`[farm] workers` caps it); at least one worker is needed.
- `cpu`: nothing asks for a GPU (`[engine] gpus = 0` and `[learner] gpus = 0`): vLLM's CPU build,
  a CPU learner, CPU verifier workers.
- `auto` (the default): `cpu` when engine and learner ask for no GPU; `split` when the cluster has
  the GPUs split asks for plus one for the farm; else `colocated` when it has at least one GPU.

Sleep or not, colocated (`decide_sleep`, a plain function of numbers): `[engine] sleep_level` when
set (0 never sleeps, 1 or 2 always); omitted, the engine stays awake when its share of the GPU
(`gpu_memory_utilization` x the GPU's memory) + the learner's estimated peak
(`kgym.training.learner_memory`, from the model's config.json and `[learner]`) + the verifier worker's
reserve (`[placement] farm_memory_gib`) + `AWAKE_HEADROOM_GIB` fit in the GPU's memory that other
processes leave free (`[placement] gpu_memory_gib`, else asked of the GPU before anything starts:
its total and what is in use then), and sleeps (level 1) when they do not, or when either memory is
unknown (the earlier behaviour). The estimate can be wrong: a step that fails with the GPU out of
memory while the engine stayed awake by it (`out_of_memory_sleep`) is retried with the engine
sleeping, synchronously, instead of failing the same way `[recovery] max_retries` times. Sleep
level 1 costs a copy of the weights to host memory every step (10.4 s at the 7B shape on an H100,
2026-12-07); the decision, its numbers and its reason are in `Placement.sleep_reason`, the job's
log and its attempt record.

Overlap (`[offpolicy] overlap`, `decide_overlap`): generating step s+1 while the learner steps on s
needs the engine awake during the learner step. `RLJobConfig` refuses an explicit `[engine]
sleep_level` >= 1 with overlap; where the placement itself decides that the engine must sleep (the
learner does not fit beside it, or a memory is unknown), the loop falls back to synchronous and says
why (the job's log and its attempt record). On one GPU the two share its compute too: without
CUDA MPS, kernels of two processes time-slice, so the overlap gains the time either leaves the GPU
idle (the engine waiting on the farm, the learner's host work), not max(generation, learning).

`plan_placement(config, cluster_gpus)` is a plain function: it returns a `Placement` or raises
`ConfigError` saying what does not fit and what to set, so the job never waits on resources the
cluster cannot give (issue: a farm taking every GPU left the learner's `ray.get` waiting forever).
Does not start actors (`jobs/rl.py` does, with `Placement`'s shares) and does not place workers on
nodes (`kgym/farm/placement.py`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from jobs.sections import ConfigError
from kgym.training.device_memory import GpuMemory

if TYPE_CHECKING:
    from jobs.rl_config import RLJobConfig
    from kgym.rollout.engine import EngineConfig

# Colocated shares of the one GPU (Ray's logical accounting; memory is vLLM's utilization + sleep).
COLOCATED_ENGINE_SHARE = 0.5
COLOCATED_LEARNER_SHARE = 0.25
COLOCATED_WORKER_SHARE = 0.25
# Left free beside the awake engine, the learner's peak and the verifier: vLLM's non-torch memory
# (NCCL, CUDA graphs' pools it does not count exactly), other CUDA contexts, the estimate's error.
AWAKE_HEADROOM_GIB = 4.0
# What a CUDA out-of-memory looks like in a failed step's error text (torch's allocator, cuBLAS, cuDNN).
OUT_OF_MEMORY_SIGNS = ("CUDA out of memory", "OutOfMemoryError", "CUBLAS_STATUS_ALLOC_FAILED",
                       "CUDNN_STATUS_ALLOC_FAILED", "CUDA error: out of memory")


@dataclass(frozen=True)
class SleepDecision:
    """Whether the colocated engine sleeps while the learner steps, and why (the numbers in GiB)."""

    level: int
    reason: str
    gpu_gib: float | None = None
    engine_gib: float | None = None
    learner_gib: float | None = None
    farm_gib: float | None = None
    headroom_gib: float | None = None
    in_use_gib: float = 0.0  # held on the GPU by other processes before the job started

    @property
    def needed_gib(self) -> float | None:
        parts = (self.engine_gib, self.learner_gib, self.farm_gib, self.headroom_gib)
        return None if any(p is None for p in parts) else sum(parts)  # type: ignore[arg-type]

    @property
    def free_gib(self) -> float | None:
        return None if self.gpu_gib is None else max(0.0, self.gpu_gib - self.in_use_gib)


def decide_sleep(setting: int | None, gpu: GpuMemory | None, engine_share: float, learner_gib: float | None,
                 farm_gib: float, headroom_gib: float = AWAKE_HEADROOM_GIB) -> SleepDecision:
    """The colocated engine's sleep level: `setting` ([engine] sleep_level) when given; else 0 when
    the engine awake (`engine_share` of the GPU's whole memory: vLLM's utilization is a fraction of
    the total), the learner's peak, the farm's reserve and the headroom fit in what other processes
    left free, and 1 when they do not or a memory is unknown (None)."""
    gpu_gib = None if gpu is None else gpu.total_gib
    engine_gib = None if gpu is None else engine_share * gpu.total_gib
    numbers = dict(gpu_gib=gpu_gib, engine_gib=engine_gib, learner_gib=learner_gib, farm_gib=farm_gib,
                   headroom_gib=headroom_gib, in_use_gib=0.0 if gpu is None else gpu.in_use_gib)
    probe = SleepDecision(0, "", **numbers)
    need, free = probe.needed_gib, probe.free_gib
    sums = ""
    if need is not None:
        others = f", {gpu.in_use_gib:.1f} of it in use by other processes" if gpu and gpu.in_use_gib >= 0.05 else ""
        sums = (f"engine {engine_gib:.1f} + learner {learner_gib:.1f} + farm {farm_gib:.1f} + headroom "
                f"{headroom_gib:.1f} = {need:.1f} GiB of the GPU's {gpu_gib:.1f}{others}")
    if setting is not None:
        why = f"[engine] sleep_level = {setting}"
        if setting == 0 and need is not None and need > free:  # type: ignore[operator]
            why += f" (the estimate says it does not fit awake: {sums}; the learner may run out of memory)"
        elif need is not None:
            why += f" ({sums})"
        return SleepDecision(setting, why, **numbers)
    if gpu is None:
        return SleepDecision(1, "the GPU's memory is unknown (set [placement] gpu_memory_gib to decide)",
                             **numbers)
    if learner_gib is None:
        return SleepDecision(1, "the learner's memory cannot be estimated (no readable config.json in "
                             "the model directory)", **numbers)
    if need <= free:  # type: ignore[operator]
        return SleepDecision(0, f"the learner fits beside the awake engine ({sums})", **numbers)
    return SleepDecision(1, f"the learner does not fit beside the awake engine ({sums})", **numbers)


def out_of_memory_sleep(decision: SleepDecision, error: str) -> SleepDecision | None:
    """The decision to take after a step failed with `error`: level 1 when the engine stayed awake by
    the estimate (no `[engine] sleep_level` set) and the error is the GPU running out of memory (the
    estimate was wrong, or memory was taken after it was asked); None to keep the placement."""
    if decision.level != 0 or decision.reason.startswith("[engine] sleep_level"):
        return None
    if not any(sign in error for sign in OUT_OF_MEMORY_SIGNS):
        return None
    return dataclasses.replace(decision, level=1, reason=f"the GPU ran out of memory with the engine awake "
                               f"({error.strip().splitlines()[-1][:160]}); before that: {decision.reason}")


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
    sleep_reason: str = ""  # why (colocated: `decide_sleep`'s reason with its numbers)
    memory: SleepDecision | None = None  # colocated: the numbers the sleep level was decided on

    def to_dict(self) -> dict[str, Any]:
        """For the attempt record: the shares, the sleep level, its reason and numbers."""
        d = asdict(self)
        d["mode"] = str(self.mode)
        return d

    @property
    def gpus(self) -> float:
        return (self.engine_gpus * self.engine_actors + self.learner_gpus
                + (self.farm_workers or 0) * self.farm_gpus_per_worker)

    def describe(self) -> str:
        farm = ("CPU workers" if not self.farm_gpus_per_worker
                else f"{self.farm_workers} verifier worker(s) x {self.farm_gpus_per_worker:g} GPU")
        sleep = f", engine sleeps (level {self.sleep_level}) while the learner steps" if self.sleep_level else ""
        if self.mode is PlacementMode.COLOCATED and self.sleep_reason:
            state = f"sleeps (level {self.sleep_level})" if self.sleep_level else "stays awake"
            sleep = f", engine {state} while the learner steps: {self.sleep_reason}"
        return (f"{self.mode}: {self.engine_actors} rollout actor(s) x {self.engine_gpus:g} GPU, learner "
                f"{self.learner_gpus:g} GPU, {farm}{sleep} ({self.gpus:g} GPUs asked for)")


def _engine_gpus(engine: EngineConfig) -> float:
    tp = int(engine.tensor_parallel_size)
    return float(max(engine.gpus, tp)) if engine.gpus else 0.0


def colocated_sleep(config: RLJobConfig, gpu_memory: Callable[[], GpuMemory | None] | None = None) -> SleepDecision:
    """`decide_sleep` for `config` colocated: the GPU's memory from `[placement] gpu_memory_gib` (all of it
    free), else from `gpu_memory()` (asked only when the decision needs it: its total and what other
    processes hold), the learner's from the model's config.json (`kgym.training.learner_memory`)."""
    from kgym.training.learner_memory import ModelShape, estimate_learner_memory

    e, pl = config.engine, config.placement
    share = e.memory_utilization(colocated=True)
    if e.sleep_level is not None and pl.gpu_memory_gib is None:  # the user decided: nothing to ask the GPU
        gpu = None
    elif pl.gpu_memory_gib is not None:
        gpu = GpuMemory(pl.gpu_memory_gib)
    else:
        gpu = gpu_memory() if gpu_memory else None
    shape = ModelShape.from_dir(config.model) if config.model else None
    learner = (estimate_learner_memory(shape, config.learner_config(), e.max_model_len)
               if shape is not None else None)
    return decide_sleep(e.sleep_level, gpu, share, learner.total_gib if learner else None,
                        pl.farm_memory_gib)


def plan_placement(config: RLJobConfig, cluster_gpus: float,
                   gpu_memory: Callable[[], GpuMemory | None] | None = None) -> Placement:
    """`config`: an `RLJobConfig`; `cluster_gpus`: `ray.cluster_resources()["GPU"]` (0 without);
    `gpu_memory`: one GPU's memory and what is in use (`ray_cluster.gpu_memory`), asked only when a
    colocated plan must decide its sleep level (None: unknown, the engine sleeps)."""
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
        sleep = colocated_sleep(config, gpu_memory)
        return Placement(mode, COLOCATED_ENGINE_SHARE, 1, COLOCATED_LEARNER_SHARE, 1, COLOCATED_WORKER_SHARE,
                         sleep.level, sleep.reason, sleep)
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


@dataclass(frozen=True)
class OverlapDecision:
    """Whether the loop overlaps the next step's generation with the learner step, and why."""

    on: bool
    reason: str


def decide_overlap(requested: bool, placement: Placement) -> OverlapDecision:
    """`[offpolicy] overlap` as the placement allows it: off where not asked; where asked, on unless
    the engine sleeps while the learner steps (then the loop runs synchronously, with the reason)."""
    if not requested:
        return OverlapDecision(False, "[offpolicy] overlap = false: synchronous loop")
    if placement.sleep_level:
        why = f": {placement.sleep_reason}" if placement.sleep_reason else ""
        return OverlapDecision(False, f"[offpolicy] overlap = true, but the placement puts the engine to sleep "
                                      f"(level {placement.sleep_level}) while the learner steps{why}; the loop "
                                      f"runs synchronously (set [placement] gpu_memory_gib or a smaller "
                                      f"[engine] gpu_memory_utilization so the learner fits beside the engine)")
    return OverlapDecision(True, "[offpolicy] overlap = true: step s+1's rollout is generated while step s's "
                                 "learner step runs (samples one policy version behind the learner)")


__all__ = ["AWAKE_HEADROOM_GIB", "OverlapDecision", "Placement", "PlacementMode", "SleepDecision",
           "colocated_sleep", "decide_overlap", "decide_sleep", "out_of_memory_sleep", "plan_placement"]
