"""`RecordSink`: the Ray actor that owns a run's Parquet writer and its Prometheus metrics.

Covers taking farm results (`write_results`, scored under the sink's `RewardConfig`) or ready
rows (`write`) as verdicts arrive, de-duplicating them by evaluation id against
what the run already holds on disk (so a resumed or retried job never adds a second verdict for an
id), updating `kgym.metrics.Metrics` from each row, serving them over HTTP (`start_exporter`) and
advertising the exporter in a Prometheus file_sd target file. A row with outcome "error" (kgym's
failure) never shadows a verdict: it is written only while the id has no row yet, and a later verdict
for that id is still written (the reader prefers it). Baseline rows the workers measured off the
candidates' path (`write_baselines`) go to the run's baselines table (`kgym.records.baseline_table`).
Its settings (`SinkConfig`: a job's [records] and [metrics]) are `kgym.sink_config`'s. Does not run
verifications (`pool.py`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray

from kgym.sink_config import SinkConfig


@dataclass(frozen=True)
class SinkSummary:
    run_path: str
    rows_written: int  # rows this sink made visible
    dropped_duplicates: int
    recorded: int  # ids with a verdict in the run now (on disk or buffered)


def recorded_verdict_ids(run_path: str | Path) -> tuple[set[str], set[str]]:
    """(ids with a verdict, ids with only kgym-error rows) among the run's visible parts (a local
    path or a URI)."""
    from kgym.records.layout import locate
    from kgym.records.reader import read_table

    where = locate(run_path)
    if not where.exists():
        return set(), set()
    table = read_table(where).select(["evaluation_id", "outcome"]).to_pydict()
    verdicts, errors = set(), set()
    for eid, outcome in zip(table["evaluation_id"], table["outcome"]):
        (errors if outcome == "error" else verdicts).add(eid)
    return verdicts, errors - verdicts


@ray.remote(num_cpus=0)
class RecordSink:
    def __init__(self, config: SinkConfig):
        from kgym.metrics import Metrics, start_exporter, write_targets_file
        from kgym.records.baseline_table import BaselineWriter
        from kgym.records.writer import RecordWriter

        self.config = config
        rec, exp = config.records, config.metrics
        self.writer = RecordWriter(rec.out, run_id=rec.run_id, job_id=rec.job_id, flush_rows=rec.flush_rows,
                                   flush_seconds=rec.flush_seconds)
        self.verdicts, self.errors = recorded_verdict_ids(self.writer.run_location)
        self.baselines = BaselineWriter(rec.out, run_id=rec.run_id, job_id=rec.job_id, flush_rows=rec.flush_rows,
                                        flush_seconds=rec.flush_seconds)
        # The writer's owner flushes on a timer, so a row is durable flush_seconds after it arrived
        # even when no other row follows it (the writer serialises its calls with a lock).
        self._stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_loop, name="kgym-sink-flush", daemon=True)
        self._flusher.start()
        self.dropped = 0
        self.metrics = Metrics()
        self.exporter = None
        self.endpoint: str | None = None
        if exp.port is not None:
            self.exporter = start_exporter(self.metrics, exp.port, addr=exp.addr)
            host = ray.util.get_node_ip_address() if exp.addr in ("0.0.0.0", "") else exp.addr
            self.endpoint = f"{host}:{self.exporter.port}"
            if exp.targets_file:
                write_targets_file(exp.targets_file, [self.endpoint], {"run_id": rec.run_id, "job_id": rec.job_id})

    def _flush_loop(self) -> None:
        tick = max(0.2, min(1.0, self.config.records.flush_seconds / 2))
        while not self._stop.wait(tick):
            try:
                self.writer.flush_if_due()
                self.baselines.flush_if_due()
            except ValueError:  # closed
                return

    def recorded_ids(self) -> list[str]:
        """Ids that already have a verdict in this run: a resumed job skips them."""
        return sorted(self.verdicts)

    def metrics_endpoint(self) -> str | None:
        """host:port of the exporter (scrape http://host:port/metrics), None without one."""
        return self.endpoint

    def declare(self, families: Iterable[tuple[str, str | None]]) -> None:
        for family, stage in families:
            self.metrics.declare(family, stage)

    def write_results(self, results: list[Any]) -> int:
        """Store farm results (`kgym.contract.EvalResult`) as rows, scored under the sink's reward
        config; returns how many were new."""
        from kgym.records.record import record_of

        return self.write([record_of(r, self.config.reward) for r in results])

    def write(self, rows: list[Mapping[str, Any]]) -> int:
        """Store rows; returns how many were new (the rest duplicated a recorded id)."""
        new = 0
        for row in rows:
            eid = row["evaluation_id"]
            if eid in self.verdicts or (row["outcome"] == "error" and eid in self.errors):
                self.dropped += 1
                continue
            self.writer.write(row)
            (self.errors if row["outcome"] == "error" else self.verdicts).add(eid)
            self.metrics.observe(row)
            new += 1
        return new

    def write_baselines(self, rows: list[Mapping[str, Any]]) -> int:
        """Store baseline rows (`kgym.records.baseline_table.baseline_row`) in the run's baselines table."""
        for row in rows:
            self.baselines.write(row)
        return len(rows)

    def set_queue_depth(self, depth: int) -> None:
        self.metrics.set_queue_depth(depth)

    def set_workers(self, counts: Mapping[str, int]) -> None:
        self.metrics.set_workers(dict(counts))

    def flush_if_due(self) -> int:
        return len(self.writer.flush_if_due())

    def flush(self) -> int:
        self.baselines.flush()
        return len(self.writer.flush())

    def summary(self) -> SinkSummary:
        return SinkSummary(run_path=self.writer.run_location.uri, rows_written=self.writer.rows_written,
                           dropped_duplicates=self.dropped, recorded=len(self.verdicts))

    def close(self) -> SinkSummary:
        """Flush and close the writer, stop the exporter, remove the target file."""
        self._stop.set()
        self.writer.close()
        self.baselines.close()
        if self.exporter is not None:
            self.exporter.close()
            self.exporter = None
            if self.config.metrics.targets_file:
                try:
                    os.unlink(self.config.metrics.targets_file)
                except FileNotFoundError:
                    pass
        return self.summary()
