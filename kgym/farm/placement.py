"""Where verifier workers go: one per GPU, spread across nodes, never on a node marked bad.

- `NodeView`: what placement knows of a node (its id, address, GPUs and CPUs); the Ray farm reads
  the live ones from the cluster (`ray_cluster/cluster_watch.py`).
- `capacity(node)`: workers a node can hold: one per GPU (each worker takes `num_gpus=1`, or
  `gpus_per_worker` when workers share GPUs with other actors, and
  `cpus_per_worker` CPUs), or one per `cpus_per_worker` CPUs when the farm runs on CPUs.
- `plan(nodes, current, ...)`: how many workers each node should have. Workers already running
  stay where they are (a joining node never makes the farm move live workers); new ones fill the
  node with the fewest first, so with a `ceiling` below the cluster's GPUs they spread over nodes.
- `NodeHealth`: health failures counted per node. A node whose workers fail their health probe (or
  cannot start) `bad_after` times in one run is marked bad: the service drops its workers and
  `plan` gives it none for the rest of that service's life. A worker killed or lost with its node
  is not a health failure.

Plain functions over `NodeView`s, without Ray; the farm service (`ray_cluster/service.py`) pins each
worker to the node chosen here with Ray's `NodeAffinitySchedulingStrategy(node_id, soft=False)`.
Does not read the cluster or start actors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from kgym.farm.farm_config import gpu_workers


@dataclass(frozen=True)
class NodeView:
    node_id: str  # hex, as Ray's NodeAffinitySchedulingStrategy takes it
    address: str  # NodeManagerAddress
    gpus: float
    cpus: float
    is_head: bool = False

    @property
    def short(self) -> str:
        return self.node_id[:8]


def decide_gpu(use_gpus: bool | None, nodes: Mapping[str, NodeView]) -> bool:
    """GPU workers or CPU workers, decided once when the farm starts (`kgym.farm.farm_config.gpu_workers`)."""
    return gpu_workers(use_gpus, any(n.gpus >= 1 for n in nodes.values()))


def capacity(node: NodeView, gpu: bool, cpus_per_worker: float, gpus_per_worker: float = 1.0) -> int:
    by_cpu = math.floor(node.cpus / cpus_per_worker + 1e-9) if cpus_per_worker > 0 else 1 << 30
    if gpu:
        # a fractional share packs several workers per GPU, but never across two GPUs
        per_gpu = math.floor(1 / gpus_per_worker + 1e-9)
        return max(0, min(int(node.gpus) * per_gpu, by_cpu))
    return max(0, by_cpu)


def plan(nodes: Mapping[str, NodeView], current: Mapping[str, int], *, gpu: bool, cpus_per_worker: float,
         ceiling: int | None, bad: Mapping[str, str] | None = None, gpus_per_worker: float = 1.0) -> dict[str, int]:
    """Workers wanted per live, usable node (node id -> count), given those running now (`current`)."""
    bad = bad or {}
    room = {i: capacity(n, gpu, cpus_per_worker, gpus_per_worker) for i, n in nodes.items() if i not in bad}
    want = {i: min(current.get(i, 0), c) for i, c in room.items()}
    total = sum(current.get(i, 0) for i in room)  # live workers count against the ceiling as they are
    while ceiling is None or total < ceiling:
        free = [i for i in sorted(room) if want[i] < room[i]]
        if not free:
            break
        pick = min(free, key=lambda i: want[i])  # the emptiest node first: spread before stacking
        want[pick] += 1
        total += 1
    return {i: n for i, n in want.items() if n}


@dataclass
class NodeHealth:
    """Health failures per node, and the nodes marked bad (node id -> why), for one farm's life."""

    bad_after: int
    failures: dict[str, list[str]] = field(default_factory=dict)
    bad: dict[str, str] = field(default_factory=dict)

    def failure(self, node_id: str, why: str) -> bool:
        """Count one; True when this failure marks the node bad."""
        if node_id in self.bad:
            return False
        seen = self.failures.setdefault(node_id, [])
        seen.append(why)
        if len(seen) >= self.bad_after:
            self.bad[node_id] = f"{len(seen)} health failures: " + "; ".join(w[:200] for w in seen[-3:])
            return True
        return False

    def is_bad(self, node_id: str) -> bool:
        return node_id in self.bad
