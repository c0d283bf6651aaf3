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
probe, `service.py` the `FarmService` actor (placement, backpressure, retries, replacement,
exactly-once by evaluation id, rows to the sink), `pool.py` its driver-side client with the batch
`run`, `evaluator.py` the episodes' `Evaluator` over it, `pool_config.py` their settings,
`task_actor.py` the curriculum actor, `sink.py` the records + metrics actor, `session.py`
connecting to Ray, `configs/` a cluster-launcher YAML and a KubeRay RayCluster manifest.
"""

from kgym.contract import EvalRequest, EvalResult, WorkerReply
from ray_cluster.evaluator import FarmEvaluator
from ray_cluster.pool import VerifierPool
from ray_cluster.pool_config import PoolConfig, PoolStats, cluster_plan
from ray_cluster.service import FarmService, give_up_result
from ray_cluster.session import RaySettings, connect
from ray_cluster.sink import RecordSink, SinkConfig, SinkSummary
from ray_cluster.task_actor import TaskActor
from ray_cluster.worker import VerifierWorker, WorkerConfig, WorkerHealth

__all__ = ["EvalRequest", "EvalResult", "FarmEvaluator", "FarmService", "PoolConfig", "PoolStats", "RaySettings",
           "RecordSink", "SinkConfig", "SinkSummary", "TaskActor", "VerifierPool", "VerifierWorker", "WorkerConfig",
           "WorkerHealth", "WorkerReply", "cluster_plan", "connect", "give_up_result"]
