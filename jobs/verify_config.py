"""The batch verification job's configuration: a TOML file read into `VerifyJobConfig`.

    input = "jobs/configs/example_input.jsonl"   # rows: see jobs/inputs.py
    out = "out/records"                           # records root; rows go to OUT/RUN_ID/<family>/
    run_id = "example"                            # re-running the same run id resumes it
    job_id = "verify"
    size = "tiny"                                 # size of task rows that do not name one
    [farm]                                        # ray_cluster.PoolConfig / WorkerConfig
    workers = 2                                   # omit: one per GPU, else one per CPU
    max_in_flight = 2
    max_attempts = 3
    spares = 8                                    # omit: 8 per GPU worker, 1 per CPU worker
    quiet_mode = "pause"                          # spares warming while a short kernel is timed: pause (default) or wait
    call_timeout_s = 1800
    [verify]                                      # kgym.verify.VerifyConfig fields for every item
    timed_runs = 5
    [metrics]
    port = 0                                      # omit: no exporter; 0: any free port
    targets_file = "/tmp/kgym/prometheus/example.json"
    [ray]
    address = "local"                             # omit: $RAY_ADDRESS (set by `ray job submit`) or local
    num_cpus = 2                                  # local instance only

Relative paths are taken from the current directory (the working dir of a submitted job). Covers
parsing and checking only; `verify.py` runs the job.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from kgym.verify import VerifyConfig
from kgym.verify.sandbox import Sandbox


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class VerifyJobConfig:
    input: str
    out: str = "out/records"
    run_id: str = "verify"
    job_id: str = "verify"
    size: str = "full"
    workers: int | None = None
    max_in_flight: int = 2
    max_attempts: int = 3
    spares: int | None = None  # None: WorkerConfig's default for the device
    quiet_mode: str = Sandbox.DEFAULT_QUIET_MODE
    call_timeout_s: float = 1800.0
    verify: dict[str, Any] = field(default_factory=dict)
    metrics_port: int | None = None
    targets_file: str | None = None
    ray_address: str | None = None
    ray_num_cpus: int | None = None


_TOP = {"input", "out", "run_id", "job_id", "size"}
_FARM = {"workers", "max_in_flight", "max_attempts", "spares", "quiet_mode", "call_timeout_s"}
_SECTIONS = {"farm", "verify", "metrics", "ray"}


def _check(table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = set(table) - allowed
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(allowed)})")


def parse_config(data: dict[str, Any], where: str = "config") -> VerifyJobConfig:
    _check(data, _TOP | _SECTIONS, where)
    if "input" not in data:
        raise ConfigError(f"{where}: needs input = <rows .jsonl or .parquet>")
    farm, verify, metrics, ray_ = (dict(data.get(k, {})) for k in ("farm", "verify", "metrics", "ray"))
    _check(farm, _FARM, f"{where} [farm]")
    _check(verify, {f.name for f in fields(VerifyConfig)} - {"reward", "device"}, f"{where} [verify]")
    _check(metrics, {"port", "targets_file"}, f"{where} [metrics]")
    _check(ray_, {"address", "num_cpus"}, f"{where} [ray]")
    if farm.get("quiet_mode", Sandbox.DEFAULT_QUIET_MODE) not in Sandbox.QUIET_MODES:
        raise ConfigError(f"{where} [farm]: quiet_mode {farm['quiet_mode']!r}: use one of "
                          f"{', '.join(Sandbox.QUIET_MODES)}")
    try:
        VerifyConfig(**verify)
    except TypeError as e:
        raise ConfigError(f"{where} [verify]: {e}") from None
    return VerifyJobConfig(**{k: data[k] for k in _TOP if k in data}, **farm, verify=verify,
                           metrics_port=metrics.get("port"), targets_file=metrics.get("targets_file"),
                           ray_address=ray_.get("address"), ray_num_cpus=ray_.get("num_cpus"))


def load_config(path: str | Path) -> VerifyJobConfig:
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except OSError as e:
        raise ConfigError(f"cannot read config {str(p)!r}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not TOML: {e}") from None
    return parse_config(data, str(p))
