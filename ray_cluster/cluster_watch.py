"""Reading the Ray cluster's nodes: which are alive now, with how many GPUs and CPUs.

`live_nodes()` reads the GCS's node table (`ray.nodes()`: one entry per node ever registered in
this cluster, `Alive` false once the GCS has declared it dead, which takes its health check's
period times its failure threshold after a raylet stops answering). The farm service (`service.py`)
hands it to a `kgym.farm.node_watch.NodeWatch`, which keeps the last view and reports which nodes
joined or left, so the service can start workers on a node that appeared and drop the workers of one
that left. Reading the table is one GCS call; the service does it every `PoolConfig.watch_interval_s`
and again whenever a worker is lost. `cluster_plan(config)` answers, before a farm starts, how many
workers (on GPUs or not) the connected cluster gives it now. Does not place workers (the rules are
`kgym.farm.placement`'s, over the `NodeView`s read here) or ask the autoscaler for nodes
(`autoscale.py`).
"""

from __future__ import annotations

import ray

from kgym.farm.farm_config import PoolConfig
from kgym.farm.placement import NodeView, decide_gpu, plan


def live_nodes() -> dict[str, NodeView]:
    """Every node the GCS holds alive, by node id."""
    out: dict[str, NodeView] = {}
    for n in ray.nodes():
        if not n.get("Alive"):
            continue
        res = n.get("Resources") or {}
        out[n["NodeID"]] = NodeView(node_id=n["NodeID"], address=n.get("NodeManagerAddress", ""),
                                    gpus=float(res.get("GPU", 0)), cpus=float(res.get("CPU", 0)),
                                    is_head="node:__internal_head__" in res)
    return out


def cluster_plan(config: PoolConfig) -> tuple[int, bool]:
    """(workers the farm would place now, GPU workers?) for the connected cluster. Raises ValueError
    when GPU workers are asked for and no live node has a GPU."""
    nodes = live_nodes()
    gpu = decide_gpu(config.use_gpus, nodes)
    targets = plan(nodes, {}, gpu=gpu, cpus_per_worker=config.cpus_per_worker, ceiling=config.ceiling,
                   gpus_per_worker=config.gpus_per_worker)
    return sum(targets.values()), gpu
