"""`RecordSink`: the Ray actor that owns a run's records and its Prometheus metrics.

A thin shell over `kgym.records.sink_core.SinkCore`, which holds the run's Parquet writer and its
baselines table, de-duplicates rows by evaluation id against what the run already holds on disk (an
"error" row never shadows a verdict), flushes them on a timer and sums them up (`SinkSummary`); it is
used and tested without Ray. The actor adds what lives with Ray: it takes farm results
(`write_results`) or ready rows (`write`) from the farm's actors and drivers, updates
`kgym.metrics.Metrics` from each row written, serves them over HTTP (`start_exporter`, advertised at
the node's address) and in a Prometheus file_sd target file. Its settings (`SinkConfig`: a job's
[records] and [metrics]) are `kgym.sink_config`'s. Does not run verifications (`pool.py`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import ray

from kgym.records.sink_core import SinkCore, SinkSummary
from kgym.sink_config import SinkConfig


@ray.remote(num_cpus=0)
class RecordSink:
    def __init__(self, config: SinkConfig):
        from kgym.metrics import Metrics, start_exporter, write_targets_file

        self.config = config
        rec, exp = config.records, config.metrics
        self.metrics = Metrics()
        self.core = SinkCore(rec, config.reward, on_row=self.metrics.observe)
        self.exporter = None
        self.endpoint: str | None = None
        if exp.port is not None:
            self.exporter = start_exporter(self.metrics, exp.port, addr=exp.addr)
            host = ray.util.get_node_ip_address() if exp.addr in ("0.0.0.0", "") else exp.addr
            self.endpoint = f"{host}:{self.exporter.port}"
            if exp.targets_file:
                write_targets_file(exp.targets_file, [self.endpoint], {"run_id": rec.run_id, "job_id": rec.job_id})

    def recorded_ids(self) -> list[str]:
        """Ids that already have a verdict in this run: a resumed job skips them."""
        return self.core.recorded_ids()

    def metrics_endpoint(self) -> str | None:
        """host:port of the exporter (scrape http://host:port/metrics), None without one."""
        return self.endpoint

    def declare(self, families: Iterable[tuple[str, str | None]]) -> None:
        for family, stage in families:
            self.metrics.declare(family, stage)

    def write_results(self, results: list[Any]) -> int:
        """Store farm results (`kgym.contract.EvalResult`) as rows, scored under the sink's reward
        config; returns how many were new."""
        return self.core.write_results(results)

    def write(self, rows: list[Mapping[str, Any]]) -> int:
        """Store rows; returns how many were new (the rest duplicated a recorded id)."""
        return self.core.write(rows)

    def write_baselines(self, rows: list[Mapping[str, Any]]) -> int:
        """Store baseline rows (`kgym.records.baseline_table.baseline_row`) in the run's baselines table."""
        return self.core.write_baselines(rows)

    def set_queue_depth(self, depth: int) -> None:
        self.metrics.set_queue_depth(depth)

    def set_workers(self, counts: Mapping[str, int]) -> None:
        self.metrics.set_workers(dict(counts))

    def flush_if_due(self) -> int:
        return self.core.flush_if_due()

    def flush(self) -> int:
        return self.core.flush()

    def summary(self) -> SinkSummary:
        return self.core.summary()

    def close(self) -> SinkSummary:
        """Flush and close the writers, stop the exporter, remove the target file."""
        summary = self.core.close()
        if self.exporter is not None:
            self.exporter.close()
            self.exporter = None
            if self.config.metrics.targets_file:
                try:
                    os.unlink(self.config.metrics.targets_file)
                except FileNotFoundError:
                    pass
        return summary
