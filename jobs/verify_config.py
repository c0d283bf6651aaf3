"""The batch verification job's configuration: `VerifyJobConfig`, read from TOML (`jobs.sections`).

    input = "jobs/configs/example_input.jsonl"   # rows: see jobs/inputs.py
    size = "tiny"                                 # size of task rows that do not name one
    [records]                                     # out (a path or URI), run_id, job_id, flush_rows, flush_seconds
    out = "out/records"
    run_id = "example"
    [farm]                                        # workers, max_in_flight, max_attempts, spares, quiet_mode, ...
    workers = 2
    [verify]                                      # kgym.verify.config.VerifyConfig settings, as given
    timed_runs = 5
    [metrics]                                     # port (0: any free one), targets_file
    port = 0
    [ray]                                         # address, num_cpus, num_gpus
    address = "local"

Every key, its default and its bounds: `python -m jobs.verify --help-config`. Overrides on the
command line: `--set farm.workers=4 --set records.run_id=again`. Relative input paths are taken
from the current directory (the working dir of a submitted job); where relative record paths go is
`jobs/context.py`'s rule. Covers parsing and checking only; `verify.py` runs the job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobs.sections import (
    ConfigError,
    build,
    load_job_config,
    option,
    partial,
    section,
)
from kgym.farm.farm_config import PoolConfig, RaySettings, check_verify_table
from kgym.sink_config import MetricsConfig, RecordsConfig
from kgym.verify.config import VerifyConfig

__all__ = ["ConfigError", "VerifyJobConfig", "load_config", "parse_config"]


@dataclass(frozen=True)
class VerifyJobConfig:
    input: str = option(doc="rows to verify: a .jsonl or .parquet file (jobs/inputs.py)")
    size: str = option("full", "size of task rows that do not name one", choices=("tiny", "small", "full"))
    records: RecordsConfig = section(RecordsConfig, "where the rows go", run_id="verify", job_id="verify")
    farm: PoolConfig = section(PoolConfig, "the verifier workers")
    verify: dict[str, Any] = partial(VerifyConfig, "the verifier's settings for every row; a key "
                                     "left out: the verifier's default")
    metrics: MetricsConfig = section(MetricsConfig, "the Prometheus exporter")
    ray: RaySettings = section(RaySettings, "which Ray")

    def __post_init__(self) -> None:
        check_verify_table(self.verify)


def parse_config(data: Mapping[str, Any], where: str = "config") -> VerifyJobConfig:
    try:
        return build(VerifyJobConfig, data)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None


def load_config(path: str | Path | None, overrides: Iterable[str] = ()) -> VerifyJobConfig:
    """The config at `path` (None: only overrides), with `--set` overrides applied."""
    return load_job_config(VerifyJobConfig, path, overrides)
