"""The farm's counters, `PoolStats`: what the farm service did (calls, retries, give-ups, duplicate
answers, forgotten results, workers replaced, added and dropped, nodes that joined, left or were
marked bad, autoscaler asks, rows stored by the sink).

Plain data, without Ray: the service actor (`ray_cluster/service.py`) and its book of evaluations
(`kgym.farm.ledger`) count into one, and the driver-side client (`ray_cluster/pool.py`) and the jobs
read the copies it hands out. Its settings are `kgym.farm.farm_config.PoolConfig`. Does not count anything
itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PoolStats"]


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

