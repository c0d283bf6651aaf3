"""The driver loop every farm job shares: requests through the pool, rows into the sink.

Covers declaring the families to the metrics, running the pool's batch client (skipping ids the run
already holds), getting each result's row into the `RecordSink` as it arrives, and counting what
happened. When the pool's service was started with the sink (as `jobs.context` does) the service
sends the rows and keeps the queue-depth and worker gauges itself, and this loop only waits for
its writes at the end (`drain`); a pool without a sink (a benchmark's warm pool) gets its rows
sent from here. Does not choose the requests (the job does) or print anything (the caller's
`on_result` does).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ray

from kgym.contract import EvalRequest, EvalResult, Outcome
from kgym.farm.pool_stats import PoolStats
from ray_cluster.pool import VerifierPool


@dataclass(frozen=True)
class StreamReport:
    requested: int  # distinct evaluation ids asked for
    skipped: int  # already recorded in the run (resumed)
    results: int  # results the pool yielded in this run
    new_rows: int  # rows the sink stored
    farm_errors: int  # results the farm gave up on (outcome error)
    wall_s: float
    pool: PoolStats


def stream(pool: VerifierPool, sink: Any, requests: Sequence[EvalRequest], *,
           on_result: Callable[[EvalResult], None] | None = None) -> StreamReport:
    t0 = time.perf_counter()
    ids = {r.evaluation_id for r in requests}
    recorded = set(ray.get(sink.recorded_ids.remote())) & ids
    families = sorted({(str(r.task["family"]), r.task.get("stage")) for r in requests})
    ray.get(sink.declare.remote(families))
    by_service = pool.sink is not None  # the service writes each result itself
    if by_service:
        pool.drain()  # rows of earlier callers are not this batch's
    writes: list[Any] = []
    farm_errors = results = 0
    for result in pool.run(requests, skip=recorded):
        results += 1
        farm_errors += result.outcome == Outcome.ERROR
        if not by_service:
            writes.append(sink.write_results.remote([result]))
        if on_result is not None:
            on_result(result)
    new_rows = pool.drain() if by_service else sum(ray.get(writes))
    ray.get(sink.flush.remote())
    if not by_service:
        ray.get([sink.set_queue_depth.remote(0), sink.set_workers.remote(pool.worker_states())])
    return StreamReport(requested=len(ids), skipped=len(recorded), results=results, new_rows=new_rows,
                        farm_errors=farm_errors, wall_s=time.perf_counter() - t0, pool=pool.stats)
