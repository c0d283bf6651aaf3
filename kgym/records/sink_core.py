"""`SinkCore`: a run's records as verdicts arrive, once per evaluation id, without Ray.

Holds the run's `RecordWriter` and its baselines table (`kgym.records.baseline_table.BaselineWriter`)
and decides which rows are written. Rules:
- One verdict per evaluation id: the ids the run already holds on disk are read when the core
  starts (`recorded_verdict_ids`), so a resumed or retried job never adds a second verdict for an id;
  a row whose id has a verdict (on disk or written here) is dropped and counted.
- A row with outcome "error" (kgym's own failure, not the kernel's) never shadows a verdict: it is
  written only while its id has no row at all, and a later verdict for that id is still written
  (the reader prefers the verdict).
- Each row written is handed to `on_row` (the sink's Prometheus metrics), in the order written.
- Durable on time: a timer thread flushes both writers every `flush_seconds / 2` (clamped to
  0.2-1 s), so a row is on disk `flush_seconds` after it arrived even when no other row follows it
  (the writers serialise their calls with a lock). `close()` stops it.

`ray_cluster.RecordSink` is the actor that wraps one (with the metrics' exporter and its file_sd
target file). Settings are `kgym.sink_config`'s `RecordsConfig`. Does not run verifications, serve
metrics or read rows for analysis (`kgym.records.reader`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgym.records.baseline_table import BaselineWriter
from kgym.records.layout import locate
from kgym.records.reader import read_table
from kgym.records.record import record_of
from kgym.records.writer import RecordWriter
from kgym.reward import RewardConfig
from kgym.sink_config import RecordsConfig


@dataclass(frozen=True)
class SinkSummary:
    run_path: str
    rows_written: int  # rows this sink made visible
    dropped_duplicates: int
    recorded: int  # ids with a verdict in the run now (on disk or buffered)


def recorded_verdict_ids(run_path: str | Path) -> tuple[set[str], set[str]]:
    """(ids with a verdict, ids with only kgym-error rows) among the run's visible parts (a local
    path or a URI)."""
    where = locate(run_path)
    if not where.exists():
        return set(), set()
    table = read_table(where).select(["evaluation_id", "outcome"]).to_pydict()
    verdicts, errors = set(), set()
    for eid, outcome in zip(table["evaluation_id"], table["outcome"]):
        (errors if outcome == "error" else verdicts).add(eid)
    return verdicts, errors - verdicts


class SinkCore:
    """A run's writers, the ids it holds, and the flush timer (started here, stopped by `close`)."""

    def __init__(self, records: RecordsConfig, reward: RewardConfig = RewardConfig(), *,
                 on_row: Callable[[Mapping[str, Any]], None] | None = None):
        self.records = records
        self.reward = reward  # farm results are scored under it into rows
        self.on_row = on_row
        self.writer = RecordWriter(records.out, run_id=records.run_id, job_id=records.job_id,
                                   flush_rows=records.flush_rows, flush_seconds=records.flush_seconds)
        self.verdicts, self.errors = recorded_verdict_ids(self.writer.run_location)
        self.baselines = BaselineWriter(records.out, run_id=records.run_id, job_id=records.job_id,
                                        flush_rows=records.flush_rows, flush_seconds=records.flush_seconds)
        self.dropped = 0
        self._stop = threading.Event()
        self._flusher = threading.Thread(target=self._flush_loop, name="kgym-sink-flush", daemon=True)
        self._flusher.start()

    def _flush_loop(self) -> None:
        tick = max(0.2, min(1.0, self.records.flush_seconds / 2))
        while not self._stop.wait(tick):
            try:
                self.writer.flush_if_due()
                self.baselines.flush_if_due()
            except ValueError:  # closed
                return

    def recorded_ids(self) -> list[str]:
        """Ids that already have a verdict in this run: a resumed job skips them."""
        return sorted(self.verdicts)

    def write_results(self, results: Iterable[Any]) -> int:
        """Store farm results (`kgym.contract.EvalResult`) as rows, scored under `reward`; returns
        how many were new."""
        return self.write([record_of(r, self.reward) for r in results])

    def write(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Store rows; returns how many were new (the rest duplicated a recorded id)."""
        new = 0
        for row in rows:
            eid = row["evaluation_id"]
            if eid in self.verdicts or (row["outcome"] == "error" and eid in self.errors):
                self.dropped += 1
                continue
            self.writer.write(row)
            (self.errors if row["outcome"] == "error" else self.verdicts).add(eid)
            if self.on_row is not None:
                self.on_row(row)
            new += 1
        return new

    def write_baselines(self, rows: list[Mapping[str, Any]]) -> int:
        """Store baseline rows (`kgym.records.baseline_table.baseline_row`) in the run's baselines table."""
        for row in rows:
            self.baselines.write(row)
        return len(rows)

    def flush_if_due(self) -> int:
        """Flush the verdict rows if the writer says so; the rows made visible."""
        return len(self.writer.flush_if_due())

    def flush(self) -> int:
        """Flush both tables; the verdict rows made visible."""
        self.baselines.flush()
        return len(self.writer.flush())

    def summary(self) -> SinkSummary:
        return SinkSummary(run_path=self.writer.run_location.uri, rows_written=self.writer.rows_written,
                           dropped_duplicates=self.dropped, recorded=len(self.verdicts))

    def close(self) -> SinkSummary:
        """Stop the timer, flush and close both writers."""
        self._stop.set()
        self.writer.close()
        self.baselines.close()
        return self.summary()
