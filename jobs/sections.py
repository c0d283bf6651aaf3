"""The loader's names the jobs use, and where the sections every farm job shares are defined.

A job's config is a frozen dataclass of sections, loaded by the library's one loader
(`kgym.settings`: TOML in, unknown keys refused, `--set a.b=value` checked alike, `--help-config`),
each section its component's own config:

    [records]  kgym.sink_config.RecordsConfig: where the job's rows go
    [metrics]  kgym.sink_config.MetricsConfig: the record sink's Prometheus exporter
    [farm]     kgym.farm.farm_config.PoolConfig: the verifier workers (and each one's WorkerConfig keys)
    [verify]   some of kgym.verify.config.VerifyConfig's settings for every verification
               (`kgym.settings.partial`: only the keys given are handed on)
    [ray]      kgym.farm.farm_config.RaySettings: which Ray

as every other section of a job is (`[learner]` is `kgym.training.learner_config.LearnerConfig`,
...). `jobs/context.py` resolves `records.out` and hands [records] and [metrics] to the record sink
(`kgym.sink_config.SinkConfig`). This module imports neither torch nor Ray (the CLI builds its
parsers from the jobs' configs). Does not run anything (`jobs/context.py`).
"""

from __future__ import annotations

from kgym.settings import (
    ConfigError,
    apply_overrides,
    build,
    describe,
    option,
    override,
    parse_literal,
    partial,
    section,
)
from kgym.settings import load_config as load_job_config

__all__ = ["ConfigError", "apply_overrides", "build", "describe", "load_job_config", "option", "override",
           "parse_literal", "partial", "section"]
