"""kgym's Ray farm: verifier workers (one per GPU), the farm service that feeds them, its clients,
the task actor and the record sink. Needs Ray (`pip install -e '.[farm]'`); the `kgym` library itself
never imports it.

    from ray_cluster import VerifierPool, PoolConfig, EvalRequest, FarmEvaluator, connect
    connect()                                        # a cluster (RAY_ADDRESS) or an embedded Ray
    with VerifierPool(PoolConfig(), sink=sink) as pool:  # starts a FarmService actor
        for result in pool.run(requests):            # a batch, as they complete; farm failures retried
            print(result.evaluation_id, result.outcome, result.verdict.gate)
        verdict = await FarmEvaluator(pool).evaluate(request)   # an episode, from any actor or driver

The request/result data is `kgym.contract`'s; `worker.py` the `VerifierWorker` actor and its health
probe, `service.py` the `FarmService` actor (placement, backpressure, retries, replacement, exactly-once
by evaluation id, rows to the sink; the rules it follows are `kgym.farm`'s: `ledger`, `placement`,
`resource_ask`, `node_watch`, and its counters `pool_stats`), `cluster_watch.py` the cluster's live nodes,
`autoscale.py` Ray's autoscaler, `pool.py` the service's driver-side client with the batch `run`,
`farm_evaluator.py` the episodes' `Evaluator` over it (their settings, `PoolConfig` and
`WorkerConfig`, are `kgym.farm.farm_config`'s; the baselines a worker measures while idle are
`kgym.farm.baseline_prefetch`'s), `task_actor.py` the curriculum actor,
`sink.py` the records + metrics actor (its settings, `SinkConfig` of `RecordsConfig` and
`MetricsConfig`, are `kgym.sink_config`'s), `session.py` connecting to Ray, `learner.py` the `LearnerActor`
over `kgym.training.learner_core.Learner`, `rollout.py` the `RolloutActor` over
`kgym.rollout.rollout_core.Rollout`, `configs/` a cluster-launcher YAML and a KubeRay RayCluster
manifest. What these actors wrap lives in the library, without Ray; this package holds the actors.

Names are imported on first use (PEP 562): `from ray_cluster import Learner` imports the learner's plain
class without importing Ray through this package.
"""

from __future__ import annotations

import importlib
from typing import Any

# exported name -> the module that defines it
_EXPORTS = {
    "EvalRequest": "kgym.contract", "EvalResult": "kgym.contract", "WorkerReply": "kgym.contract",
    "FarmEvaluator": "ray_cluster.farm_evaluator",
    "VerifierPool": "ray_cluster.pool",
    "PoolConfig": "kgym.farm.farm_config", "PoolStats": "kgym.farm.pool_stats",
    "cluster_plan": "ray_cluster.cluster_watch",
    "FarmService": "ray_cluster.service", "give_up_result": "kgym.farm.ledger",
    "BaselineRequest": "kgym.farm.baseline_prefetch",
    "RaySettings": "kgym.farm.farm_config", "connect": "ray_cluster.session",
    "RecordSink": "ray_cluster.sink", "SinkConfig": "kgym.sink_config", "SinkSummary": "kgym.records.sink_core",
    "RecordsConfig": "kgym.sink_config", "MetricsConfig": "kgym.sink_config",
    "TaskActor": "ray_cluster.task_actor",
    "VerifierWorker": "ray_cluster.worker", "WorkerHealth": "ray_cluster.worker",
    "WorkerConfig": "kgym.farm.farm_config",
    "LearnerActor": "ray_cluster.learner",
    "Learner": "kgym.training.learner_core", "LearnerConfig": "kgym.training.learner_config",
    "LoraSettings": "kgym.training.learner_config", "StepMetrics": "kgym.training.learner_core",
    "StepStatus": "kgym.training.learner_core",
    "latest_checkpoint": "kgym.training.learner_core",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ray_cluster' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access skips this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
