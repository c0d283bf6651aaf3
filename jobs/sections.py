"""The sections every farm job shares, and the loader's names the jobs use.

A job's config is a frozen dataclass of sections, loaded by the library's one loader
(`kgym.settings`: TOML in, unknown keys refused, `--set a.b=value` checked alike, `--help-config`):

    [records]  RecordsSection (here): where the job's rows go
    [metrics]  MetricsSection (here): the record sink's Prometheus exporter
    [farm]     kgym.farm_config.PoolConfig: the verifier workers (and each one's WorkerConfig keys)
    [verify]   kgym.verify.VerifyConfig fields for every verification (checked by check_verify_table)
    [ray]      kgym.farm_config.RaySettings: which Ray

Every other section of a job is its component's own config (`[learner]` is
`kgym.training.learner_config.LearnerConfig`, ...). `[records]` and `[metrics]` are the job's
(`jobs/context.py` resolves `records.out` and hands both to the record sink). This module imports
neither torch nor Ray (the CLI builds its parsers from the jobs' configs). Does not run anything
(`jobs/context.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kgym.settings import (
    ConfigError,
    apply_overrides,
    build,
    describe,
    option,
    override,
    parse_literal,
    section,
)
from kgym.settings import load_config as load_job_config

__all__ = ["ConfigError", "MetricsSection", "RecordsSection", "apply_overrides", "build", "describe",
           "load_job_config", "option", "override", "parse_literal", "section"]


@dataclass(frozen=True)
class RecordsSection:
    """[records]: where rows go (`ray_cluster.SinkConfig`)."""

    out: str = option("out/records", "records root: a local path or a pyarrow filesystem URI (file://, s3://, "
                      "gs://, hdfs://); rows go to OUT/RUN_ID/<family>/. Relative paths: see docs/farm.md "
                      "(inside `ray job submit` they need KGYM_SUBMIT_DIR)")
    run_id: str = option("run", "run id; re-running the same run id resumes it (ids with a verdict are skipped)")
    job_id: str = option("job", "job id, stored in every row")
    flush_rows: int = option(8, "rows buffered before a part file is written", ge=1, le=1_000_000)
    flush_seconds: float = option(2.0, "a row waits at most this long before it is durable", ge=0)


@dataclass(frozen=True)
class MetricsSection:
    """[metrics]: the sink's Prometheus exporter."""

    port: int | None = option(None, "exporter port; omit: no exporter; 0: any free port", ge=0, le=65535)
    targets_file: str | None = option(None, "Prometheus file_sd target file written once the exporter listens")
