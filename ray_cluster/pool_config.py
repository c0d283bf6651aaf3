"""The farm's settings and counters: `PoolConfig`, `PoolStats`, and `cluster_plan` (how many workers,
on GPUs or not, for the connected cluster).

Plain data shared by the service actor (`service.py`) and its driver-side client (`pool.py`). Does not
start anything; `cluster_plan` only reads the cluster's resources.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ray

from ray_cluster.worker import WorkerConfig


@dataclass(frozen=True)
class PoolConfig:
    workers: int | None = None  # None: one per GPU of the cluster, else one per CPU it offers
    use_gpus: bool | None = None  # None: GPUs if the cluster has any
    cpus_per_worker: float = 1.0
    max_in_flight: int = 2  # calls queued on one worker: one running, one ready to start
    max_attempts: int = 3  # calls per evaluation before the farm gives up on it
    call_timeout_s: float = 1800.0  # a call running longer than this means the worker is wedged
    probe_interval_s: float = 30.0  # health probe of each worker at least this often
    probe_timeout_s: float = 60.0
    start_timeout_s: float = 600.0  # a new worker must answer ready() within this
    # submit() calls the service actor runs at once (Ray's max_concurrency for it): each waiting
    # caller holds one until its verdict is back; callers past it wait in Ray's queue.
    max_waiting: int = 10_000
    tick_s: float = 0.5  # how often the service checks deadlines and pushes gauges
    worker: WorkerConfig = field(default_factory=WorkerConfig)


@dataclass
class PoolStats:
    submitted: int = 0  # calls made to workers
    completed: int = 0  # distinct evaluation ids with a result
    retried: int = 0  # calls repeated because the farm failed
    gave_up: int = 0  # results with outcome error after max_attempts
    duplicates: int = 0  # requests answered without a new verification (id already queued, running or done)
    replaced: int = 0  # workers killed and replaced
    replaced_why: list[str] = field(default_factory=list)
    sink_rows: int = 0  # rows the RecordSink stored from this service's results
    sink_errors: list[str] = field(default_factory=list)  # failed writes to the sink


def cluster_plan(config: PoolConfig) -> tuple[int, bool]:
    """(number of workers, GPU workers?) for the connected cluster."""
    res = ray.cluster_resources()
    gpus = int(res.get("GPU", 0))
    use_gpus = config.use_gpus if config.use_gpus is not None else gpus > 0
    if use_gpus and gpus == 0:
        raise ValueError("GPU workers asked for, but the Ray cluster has no GPU")
    if config.workers is not None:
        return max(1, config.workers), use_gpus
    if use_gpus:
        return gpus, True
    return max(1, int(res.get("CPU", 1) // max(config.cpus_per_worker, 1e-9))), False
