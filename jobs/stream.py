"""The driver loop every farm job shares: requests through the pool, rows into the sink.

Covers declaring the families to the metrics, running the pool (skipping ids the run already
holds), sending each result's row to the `RecordSink` as it arrives, keeping the queue-depth and
worker gauges current, flushing on a timer and at the end, and counting what happened. Does not
choose the requests (the job does) or print anything (the caller's `on_result` does).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import ray

from ray_cluster.pool import PoolStats, VerifierPool
from kgym.contract import EvalRequest, EvalResult, Outcome


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
           on_result: Callable[[EvalResult], None] | None = None, flush_every_s: float = 1.0) -> StreamReport:
    t0 = time.perf_counter()
    ids = {r.evaluation_id for r in requests}
    recorded = set(ray.get(sink.recorded_ids.remote())) & ids
    families = sorted({(str(r.task["family"]), r.task.get("stage")) for r in requests})
    ray.get(sink.declare.remote(families))
    todo = len(ids) - len(recorded)
    ray.get([sink.set_queue_depth.remote(todo), sink.set_workers.remote(pool.worker_states())])
    writes: list[Any] = []
    new_rows = farm_errors = results = 0
    last_flush = time.monotonic()
    for result in pool.run(requests, skip=recorded):
        results += 1
        farm_errors += result.outcome == Outcome.ERROR
        writes.append(sink.write_results.remote([result]))
        sink.set_queue_depth.remote(todo - results)
        sink.set_workers.remote(pool.worker_states())
        if on_result is not None:
            on_result(result)
        if time.monotonic() - last_flush > flush_every_s:
            new_rows += sum(ray.get(writes))
            writes = []
            ray.get(sink.flush_if_due.remote())
            last_flush = time.monotonic()
    new_rows += sum(ray.get(writes))
    ray.get([sink.flush.remote(), sink.set_queue_depth.remote(0), sink.set_workers.remote(pool.worker_states())])
    return StreamReport(requested=len(ids), skipped=len(recorded), results=results, new_rows=new_rows,
                        farm_errors=farm_errors, wall_s=time.perf_counter() - t0, pool=pool.stats)
