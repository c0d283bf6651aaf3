"""The farm's counters, `PoolStats`, and `cluster_plan` (how many workers, on GPUs or not, the
connected cluster gives now). Its settings, `PoolConfig`, are the library's (`kgym.farm_config`: a
job's `[farm]`), imported here for the actors.

Plain data shared by the service actor (`service.py`) and its driver-side client (`pool.py`). The
worker count is elastic: the service follows the cluster (`cluster_watch.py`) and places one worker
per GPU of every live, usable node (`placement.py`), between `min_workers` and `max_workers`; while
work queues it asks the autoscaler for more (`autoscale.py`). `PoolConfig` checks its own bounds
(a `ValueError` naming the field and the fix). Does not start anything; `cluster_plan` only reads
the cluster's nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgym.farm_config import PoolConfig

__all__ = ["PoolConfig", "PoolStats", "cluster_plan"]


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
