"""The farm's settings and counters: `PoolConfig`, `PoolStats`, and `cluster_plan` (how many workers,
on GPUs or not, the connected cluster gives now).

Plain data shared by the service actor (`service.py`) and its driver-side client (`pool.py`). The
worker count is elastic: the service follows the cluster (`cluster_watch.py`) and places one worker
per GPU of every live, usable node (`placement.py`), between `min_workers` and `max_workers`; while
work queues it asks the autoscaler for more (`autoscale.py`). `PoolConfig` checks its own bounds
(a `ValueError` naming the field and the fix). Does not start anything; `cluster_plan` only reads
the cluster's nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ray_cluster.worker import WorkerConfig


@dataclass(frozen=True)
class PoolConfig:
    # Worker counts. `workers` is the shorthand for min_workers = max_workers = workers.
    workers: int | None = None
    # Fewer workers than this (GPUs missing): the farm asks the autoscaler for the rest and keeps
    # that request standing; 0: nothing is asked while the farm is idle.
    min_workers: int = 0
    max_workers: int | None = None  # None: one per GPU (per CPU slot without GPUs) of the cluster
    use_gpus: bool | None = None  # None: GPUs if the cluster has any
    cpus_per_worker: float = 1.0
    # Ray GPU share of each GPU worker: 1 (a GPU each) or a fraction, when the worker shares its GPU
    # with other actors (the RL job's colocated mode: engine, learner and one worker on one GPU).
    gpus_per_worker: float = 1.0
    max_in_flight: int = 2  # calls queued on one worker: one running, one ready to start
    max_attempts: int = 3  # calls per evaluation before the farm gives up on it
    call_timeout_s: float = 1800.0  # a call running longer than this means the worker is wedged
    probe_interval_s: float = 30.0  # health probe of each worker at least this often
    probe_timeout_s: float = 60.0
    # A new worker must answer ready() within this; and queued work with no worker at all (every
    # node gone or marked bad) is given up after it, with an error naming why.
    start_timeout_s: float = 600.0
    # submit() calls the service actor runs at once (Ray's max_concurrency for it): each waiting
    # caller holds one until its verdict is back; callers past it wait in Ray's queue.
    max_waiting: int = 10_000
    # Finished results kept to answer a resubmitted evaluation id without verifying it again, the
    # least recently asked for dropped first (a few KB each: 100,000 is a few hundred MB at most). An id
    # submitted again after its result was dropped is verified again; the RecordSink stores one row
    # per id (the first), so the records are unchanged.
    kept_results: int = 100_000
    tick_s: float = 0.5  # how often the service checks deadlines and pushes gauges
    watch_interval_s: float = 2.0  # how often the service reads the cluster's nodes (ray.nodes())
    autoscale: bool = True  # ask the autoscaler for worker bundles while work queues (request_resources)
    release_after_s: float = 10.0  # nothing queued or running this long: the request is released
    # Health failures (failed or unhealthy probes, a worker that could not start) of workers on one
    # node before the node is marked bad: its workers are dropped and it is not used again by this farm.
    bad_node_failures: int = 3
    worker: WorkerConfig = field(default_factory=WorkerConfig)

    def __post_init__(self) -> None:
        def bad(name: str, value: object, want: str) -> ValueError:
            return ValueError(f"PoolConfig.{name}={value!r}: {want}")

        if self.workers is not None:
            if self.workers < 1:
                raise bad("workers", self.workers, "need at least 1 (or leave it unset: one per GPU)")
            if self.max_workers not in (None, self.workers) or self.min_workers not in (0, self.workers):
                raise bad("workers", self.workers, f"is the shorthand for min_workers = max_workers = workers; it "
                          f"contradicts min_workers={self.min_workers}, max_workers={self.max_workers}: set either "
                          f"workers or min_workers/max_workers")
        if not 0 < self.gpus_per_worker <= 1:
            raise bad("gpus_per_worker", self.gpus_per_worker, "need a share of one GPU in (0, 1]")
        if self.min_workers < 0:
            raise bad("min_workers", self.min_workers, "need 0 or more")
        if self.max_workers is not None:
            if self.max_workers < 1:
                raise bad("max_workers", self.max_workers, "need at least 1 (or leave it unset: one per GPU)")
            if self.min_workers > self.max_workers:
                raise bad("min_workers", self.min_workers, f"is more than max_workers={self.max_workers}: "
                          f"raise max_workers or lower min_workers")
        for name in ("max_in_flight", "max_attempts", "bad_node_failures", "max_waiting", "kept_results"):
            if getattr(self, name) < 1:
                raise bad(name, getattr(self, name), "need at least 1")
        for name in ("cpus_per_worker", "call_timeout_s", "probe_interval_s", "probe_timeout_s", "start_timeout_s",
                     "tick_s", "watch_interval_s"):
            if not getattr(self, name) > 0:
                raise bad(name, getattr(self, name), "need a positive number")
        if self.release_after_s < 0:
            raise bad("release_after_s", self.release_after_s, "need 0 or more seconds")

    @property
    def floor(self) -> int:
        """Workers the farm wants at least (asking the autoscaler for the missing GPUs)."""
        return self.workers if self.workers is not None else self.min_workers

    @property
    def ceiling(self) -> int | None:
        """Workers the farm starts at most (None: one per usable GPU or CPU slot)."""
        return self.workers if self.workers is not None else self.max_workers


@dataclass
class PoolStats:
    submitted: int = 0  # calls made to workers
    completed: int = 0  # distinct evaluation ids with a result
    retried: int = 0  # calls repeated because the farm failed
    gave_up: int = 0  # results with outcome error after max_attempts
    duplicates: int = 0  # requests answered without a new verification (id already queued, running or done)
    forgotten: int = 0  # kept results dropped (kept_results reached): a resubmission of one is verified again
    replaced: int = 0  # workers killed and replaced on the same node
    replaced_why: list[str] = field(default_factory=list)
    added: int = 0  # workers started after the first placement (a node joined, or one left and freed room)
    dropped: int = 0  # workers removed without a replacement on their node (node left or marked bad)
    dropped_why: list[str] = field(default_factory=list)
    nodes_joined: list[str] = field(default_factory=list)  # node ids seen after the farm started
    nodes_left: list[str] = field(default_factory=list)
    bad_nodes: list[str] = field(default_factory=list)  # "node_id: why", in the order they were marked
    autoscale_asks: list[int] = field(default_factory=list)  # worker bundles asked for, in order (0: released)
    autoscale_errors: list[str] = field(default_factory=list)
    sink_rows: int = 0  # rows the RecordSink stored from this service's results
    sink_errors: list[str] = field(default_factory=list)  # failed writes to the sink


def cluster_plan(config: PoolConfig) -> tuple[int, bool]:
    """(workers the farm would place now, GPU workers?) for the connected cluster. Raises ValueError
    when GPU workers are asked for and no live node has a GPU."""
    from ray_cluster.cluster_watch import live_nodes
    from ray_cluster.placement import decide_gpu, plan

    nodes = live_nodes()
    gpu = decide_gpu(config.use_gpus, nodes)
    targets = plan(nodes, {}, gpu=gpu, cpus_per_worker=config.cpus_per_worker, ceiling=config.ceiling,
                   gpus_per_worker=config.gpus_per_worker)
    return sum(targets.values()), gpu
