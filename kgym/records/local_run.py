"""A local run: verify a list of items with one `Verifier`, streaming every verdict to the records
writer and the metrics as it comes.

Covers the loop a single process runs (`kgym verify --out/--metrics-port` and the tests): per item,
verify, build the row, write it, observe it, and keep the queue-depth and worker-state gauges true.
The Ray farm does the same per verdict from its actors with the same `make_record`, `RecordWriter`
and `Metrics`; this module does not know about Ray, schedule work or retry (a local `Verifier` turns
everything a candidate does into a verdict; a kgym failure is a row with outcome "error").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kgym.contract import EvalRequest, WorkerInfo
from kgym.records.record import make_record
from kgym.records.writer import RecordWriter
from kgym.reward import RewardConfig


@dataclass(frozen=True)
class Evaluated:
    """An item's verdict (a `kgym.verify.Verdict`) and the row recorded for it."""

    verdict: Any
    record: dict[str, Any]


def verify_items(items: Sequence[EvalRequest], verifier: Any, *, writer: RecordWriter | None = None,
                 metrics: Any = None, worker: WorkerInfo | None = None, reward_config: RewardConfig = RewardConfig(),
                 on_record: Callable[[Evaluated], None] | None = None) -> list[Evaluated]:
    """Verify `items` in order with `verifier` (a `kgym.verify.Verifier`); returns verdicts and rows.
    `metrics` is a `kgym.metrics.Metrics` or None; `on_record` sees each result once it is stored.
    The writer is flushed at the end (not closed: the caller owns it)."""
    worker = worker or WorkerInfo.here(str(verifier.device))
    rows = []
    if metrics is not None:
        for item in items:
            metrics.declare(str(item.task["family"]), item.task.get("stage"))
        metrics.set_queue_depth(len(items))
        metrics.set_workers({"idle": 1})
    for i, item in enumerate(items):
        seed = item.seed
        if metrics is not None:
            metrics.set_queue_depth(len(items) - i - 1)
            metrics.set_workers({"busy": 1})
        started = time.time()
        verdict = verifier.verify(item.reference, item.candidate, seed=seed, **dict(item.overrides))
        row = make_record(task=item.task, candidate_source=item.candidate, verdict=verdict, worker=worker,
                          reward_config=reward_config, episode=item.episode, seed=seed, started_at=started,
                          finished_at=time.time())
        if writer is not None:
            writer.write(row)
        if metrics is not None:
            metrics.observe(row)
            metrics.set_workers({"idle": 1})
        done = Evaluated(verdict, row)
        if on_record is not None:
            on_record(done)
        rows.append(done)
    if writer is not None:
        writer.flush()
    return rows
