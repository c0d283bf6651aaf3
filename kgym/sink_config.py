"""The record sink's settings: `RecordsConfig` (a job's `[records]`: where its rows go),
`MetricsConfig` (`[metrics]`: the sink's Prometheus exporter) and `SinkConfig`, what a
`ray_cluster.RecordSink` is built from (the two, with `records.out` resolved, and the reward rows
are scored under).

    sink = RecordSink.remote(SinkConfig(RecordsConfig(out="/abs/records", run_id="r1", job_id="rl")))

Plain data: the sink actor (`ray_cluster/sink.py`) reads these and the jobs' configs are made of
them (`kgym.settings` loads them), so each setting has one definition, one default and one name.
`records.out` as a job's TOML gives it may be relative; the sink is handed it resolved (an absolute
path or a URI: `jobs.context.records_root`), since the sink's process has another working
directory. Imports neither torch nor Ray. Does not write anything (`kgym.records.RecordWriter`,
`kgym.metrics`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgym.reward import RewardConfig
from kgym.settings import internal, option


@dataclass(frozen=True)
class RecordsConfig:
    """[records]: where rows go: OUT/RUN_ID/<family>/, written `flush_rows` at a time."""

    out: str = option("out/records", "records root: a local path or a pyarrow filesystem URI (file://, s3://, "
                      "gs://, hdfs://); rows go to OUT/RUN_ID/<family>/. Relative paths: see docs/farm.md "
                      "(inside `ray job submit` they need KGYM_SUBMIT_DIR)")
    run_id: str = option("run", "run id; re-running the same run id resumes it (ids with a verdict are skipped)")
    job_id: str = option("job", "job id, stored in every row")
    flush_rows: int = option(8, "rows buffered before a part file is written", ge=1, le=1_000_000)
    flush_seconds: float = option(2.0, "a row waits at most this long before it is durable", ge=0)


@dataclass(frozen=True)
class MetricsConfig:
    """[metrics]: the record sink's Prometheus exporter."""

    port: int | None = option(None, "exporter port; omit: no exporter; 0: any free port", ge=0, le=65535)
    targets_file: str | None = option(None, "Prometheus file_sd target file written once the exporter listens")
    addr: str = internal("0.0.0.0", "the address the exporter listens on (all interfaces: Prometheus scrapes "
                         "the sink's node)")


@dataclass(frozen=True)
class SinkConfig:
    """A `RecordSink`: its records (`out` resolved: an absolute path or a URI), its exporter, and the
    reward config farm results are scored under into rows."""

    records: RecordsConfig
    metrics: MetricsConfig = field(default_factory=MetricsConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
