"""kgym's Ray farm: verifier workers (one per GPU), the pool that feeds them, the task actor and the
record sink. Needs Ray (`pip install -e '.[farm]'`); the `kgym` library itself never imports it.

    from ray_cluster import VerifierPool, PoolConfig, EvalRequest, connect
    connect()                                        # a cluster (RAY_ADDRESS) or an embedded Ray
    with VerifierPool(PoolConfig()) as pool:         # one worker per GPU, else per CPU
        for result in pool.run(requests):            # as they complete; farm failures retried
            print(result.evaluation_id, result.outcome, result.verdict.gate)

The request/result data is `kgym.contract`'s; `worker.py` the `VerifierWorker` actor and its health probe,
`pool.py` placement, backpressure, retries and replacement, `task_actor.py` the curriculum actor,
`sink.py` the records + metrics actor, `session.py` connecting to Ray, `configs/` a cluster-launcher
YAML and a KubeRay RayCluster manifest.
"""

from ray_cluster.pool import PoolConfig, PoolStats, VerifierPool, cluster_plan
from ray_cluster.session import RaySettings, connect
from ray_cluster.sink import RecordSink, SinkConfig, SinkSummary
from ray_cluster.task_actor import TaskActor
from kgym.contract import EvalRequest, EvalResult, WorkerReply
from ray_cluster.worker import VerifierWorker, WorkerConfig, WorkerHealth

__all__ = ["EvalRequest", "EvalResult", "PoolConfig", "PoolStats", "RaySettings", "RecordSink", "SinkConfig",
           "SinkSummary", "TaskActor", "VerifierPool", "VerifierWorker", "WorkerConfig", "WorkerHealth",
           "WorkerReply", "cluster_plan", "connect"]
