"""Typed, nested job configs: TOML in, unknown keys refused, dotted overrides on the command line.

    cfg = load_job_config(VerifyJobConfig, "job.toml", ["farm.workers=4", 'records.out="s3://b/runs"'])

A job's config is a frozen dataclass whose fields are values or sections (dataclasses again). Each
field is declared with `option(default, doc, ge=..., le=..., gt=..., choices=...)`: the doc is what
`describe(cls)` prints (`--help-config`), the bounds are checked on load. Loading a table:
- a key no field has is refused, naming the key, where it was and the keys allowed there;
- a value of the wrong type is refused (an int is accepted for a float; bool is never an int);
- a value outside its bounds or choices is refused;
- a required field (no default) that is missing is refused.
`--set a.b=v` overrides go through the same checks: the key path must exist, and `v` is read as a
TOML literal (`4`, `true`, `"text"`, `[1, 2]`, `{a = 1}`); a value that is not one is taken as a
bare string (`--set records.out=s3://b/runs`). A section typed `dict` (`[verify]`) takes any key at
load; its job checks them (VerifyConfig's fields). Every failure is a `ConfigError` (exit 2).

The sections every farm job shares are here too: `FarmSection`, `RecordsSection`, `MetricsSection`,
`RaySection`. This module imports neither torch nor Ray (the CLI builds its parsers from it); the
settings objects of `ray_cluster` are built on demand. Does not run anything (`jobs/context.py`).
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A bad config file, key or value: the job exits 2 with this message."""


_MISSING = dataclasses.MISSING


def option(default: Any = _MISSING, doc: str = "", *, ge: float | None = None, le: float | None = None,
           gt: float | None = None, choices: Callable[[], Iterable[Any]] | Iterable[Any] | None = None,
           factory: Callable[[], Any] | None = None) -> Any:
    """A config field: its default (or `factory`), its documentation and its bounds. `choices` may
    be a callable, so a module that knows them (and imports torch) is imported only when checking."""
    meta = {"doc": doc, "ge": ge, "le": le, "gt": gt, "choices": choices}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def section(cls: type, doc: str, **defaults: Any) -> Any:
    """A nested section of a config (a TOML table); `defaults` are this job's own defaults for some
    of its keys (a key the table leaves out takes them)."""
    return field(default_factory=lambda: cls(**defaults), metadata={"doc": doc, "section": True, "defaults": defaults})


# -- the shared sections -------------------------------------------------------------------------
def _quiet_modes() -> tuple[str, ...]:
    from kgym.verify.parent.sandbox import Sandbox  # imports torch: only when a config names a quiet mode

    return tuple(Sandbox.QUIET_MODES)


@dataclass(frozen=True)
class FarmSection:
    """[farm]: the verifier workers and the service that feeds them (`ray_cluster.PoolConfig`)."""

    workers: int | None = option(None, "verifier workers; omit: one per GPU of the cluster, else one per CPU", ge=1)
    min_workers: int = option(0, "fewer workers than this: the farm asks the autoscaler for the missing GPUs",
                              ge=0, le=100_000)
    max_workers: int | None = option(None, "at most this many workers as nodes join; omit: one per GPU", ge=1)
    use_gpus: bool | None = option(None, "workers on GPUs (one each); omit: when the cluster has GPUs")
    cpus_per_worker: float = option(1.0, "CPUs Ray reserves for each worker", gt=0)
    gpus_per_worker: float = option(1.0, "Ray GPU share of each GPU worker (a fraction when it shares its GPU; the "
                                    "RL job's colocated mode sets its own)", gt=0, le=1)
    max_in_flight: int = option(2, "calls queued on one worker: one running, the rest ready to start", ge=1, le=64)
    max_attempts: int = option(3, "calls per evaluation before the farm gives up on it (farm failures only)",
                               ge=1, le=20)
    call_timeout_s: float = option(1800.0, "a call running longer means the worker is wedged: replaced", gt=0)
    probe_interval_s: float = option(30.0, "health probe of each worker at least this often", gt=0)
    probe_timeout_s: float = option(60.0, "a probe unanswered this long: the worker is replaced", gt=0)
    start_timeout_s: float = option(600.0, "a new worker must be ready within this", gt=0)
    spares: int | None = option(None, "warm candidate processes per worker; omit: 8 on a GPU, 1 on the CPU",
                                ge=0, le=64)
    quiet_mode: str | None = option(None, "spares warming while a short kernel is timed (kgym.verify.parent.sandbox."
                                    "Sandbox.QUIET_MODES); omit: the sandbox's default (pause)",
                                    choices=_quiet_modes)
    zygote: bool = option(True, "spares forked from a zygote that has imported torch and Triton (false: each "
                          "started cold, the old path; docs/spares.md)")
    cache_dir: str | None = option(None, "baseline cache on each worker; omit: $KGYM_CACHE_DIR or "
                                   "~/.cache/kgym/baselines")
    kept_results: int = option(100_000, "finished results the farm keeps to answer a resubmitted evaluation id "
                               "(least recently asked for dropped first; one dropped is verified again)",
                               ge=1, le=10_000_000)

    def worker_config(self, verify: Mapping[str, Any] | None = None) -> Any:
        from ray_cluster.worker import WorkerConfig

        opts: dict[str, Any] = {"spares": self.spares, "cache_dir": self.cache_dir, "verify": dict(verify or {})}
        if self.quiet_mode is not None:
            opts["quiet_mode"] = self.quiet_mode
        if not self.zygote:
            opts["zygote"] = False
        return WorkerConfig(**opts)

    def pool_config(self, verify: Mapping[str, Any] | None = None) -> Any:
        from ray_cluster.pool_config import PoolConfig

        return PoolConfig(workers=self.workers, min_workers=self.min_workers, max_workers=self.max_workers,
                          use_gpus=self.use_gpus, cpus_per_worker=self.cpus_per_worker,
                          gpus_per_worker=self.gpus_per_worker,
                          max_in_flight=self.max_in_flight, max_attempts=self.max_attempts,
                          call_timeout_s=self.call_timeout_s, probe_interval_s=self.probe_interval_s,
                          probe_timeout_s=self.probe_timeout_s, start_timeout_s=self.start_timeout_s,
                          kept_results=self.kept_results, worker=self.worker_config(verify))


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


@dataclass(frozen=True)
class RaySection:
    """[ray]: which Ray to use (`ray_cluster.RaySettings`)."""

    address: str | None = option(None, "omit: $RAY_ADDRESS (set by `ray job submit`), else a new local instance; "
                                 "\"local\": always a new local instance")
    num_cpus: int | None = option(None, "CPUs of a local instance; omit: this machine's", ge=1)
    num_gpus: int | None = option(None, "GPUs of a local instance; omit: what Ray detects", ge=0)

    def settings(self) -> Any:
        from ray_cluster.session import RaySettings

        return RaySettings(address=self.address, num_cpus=self.num_cpus, num_gpus=self.num_gpus)


def check_verify(verify: Mapping[str, Any], where: str = "[verify]") -> None:
    """`[verify]` holds `kgym.verify.VerifyConfig` fields (device excluded: the worker picks it)."""
    from kgym.verify import VerifyConfig

    allowed = {f.name for f in fields(VerifyConfig)} - {"device"}
    _refuse_unknown(verify, allowed, where)
    try:
        VerifyConfig(**verify)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None


# -- loading -------------------------------------------------------------------------------------
def _refuse_unknown(table: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}" + (f" (and {unknown[1:]})" if unknown[1:] else "")
                          + f"; allowed: {', '.join(sorted(allowed))}")


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_section(f: dataclasses.Field) -> bool:
    return bool(f.metadata.get("section"))


def _type_ok(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, a) for a in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin in (dict, Mapping) or hint is dict:
        return isinstance(value, dict)
    if origin in (tuple, list) or hint in (tuple, list):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        return isinstance(value, (list, tuple)) and all(_type_ok(v, args[0]) for v in value) if args else \
            isinstance(value, (list, tuple))
    return isinstance(value, hint) if isinstance(hint, type) else True


def _type_name(hint: Any) -> str:
    return str(hint).replace("typing.", "").replace("<class '", "").replace("'>", "")


def _check_value(f: dataclasses.Field, hint: Any, value: Any, where: str) -> Any:
    key = f"{where}.{f.name}" if where else f.name
    if not _type_ok(value, hint):
        raise ConfigError(f"{key}: {value!r} is not a {_type_name(hint)}")
    m = f.metadata
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if m.get("ge") is not None and value < m["ge"]:
            raise ConfigError(f"{key}: {value!r} is below its lower bound {m['ge']}")
        if m.get("gt") is not None and value <= m["gt"]:
            raise ConfigError(f"{key}: {value!r} must be above {m['gt']}")
        if m.get("le") is not None and value > m["le"]:
            raise ConfigError(f"{key}: {value!r} is above its upper bound {m['le']}")
    choices = m.get("choices")
    if choices is not None and value is not None:
        allowed = tuple(choices() if callable(choices) else choices)
        if value not in allowed:
            raise ConfigError(f"{key}: {value!r} is not one of {', '.join(map(str, allowed))}")
    wants_tuple = typing.get_origin(hint) is tuple or any(typing.get_origin(a) is tuple for a in typing.get_args(hint))
    return tuple(value) if isinstance(value, list) and wants_tuple else value


def build(cls: type, data: Mapping[str, Any], where: str = "") -> Any:
    """An instance of the config dataclass `cls` from a (TOML) table, every key and value checked."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where or 'config'}: expected a table, got {data!r}")
    known = {f.name: f for f in fields(cls)}
    _refuse_unknown(data, known, f"[{where}]" if where else "config")
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for name, f in known.items():
        key = f"{where}.{name}" if where else name
        if name not in data:
            if f.default is _MISSING and f.default_factory is _MISSING:
                raise ConfigError(f"{key}: required ({f.metadata.get('doc', '')})")
            continue
        if _is_section(f):
            table = data[name]
            if isinstance(table, Mapping):
                table = {**f.metadata["defaults"], **table}
            kwargs[name] = build(hints[name], table, key)
        else:
            kwargs[name] = _check_value(f, hints[name], data[name], where)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        if isinstance(e, ConfigError):
            raise
        raise ConfigError(f"{where or 'config'}: {e}") from None


def parse_literal(text: str) -> Any:
    """A TOML literal (`4`, `true`, `"s"`, `[1, 2]`); anything else is the bare string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_overrides(cls: type, data: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """`data` with each `a.b=value` set (a copy); a key path no field has is refused like a TOML key."""
    out = _deep_copy(data)
    for item in overrides:
        path, sep, text = item.partition("=")
        if not sep or not path.strip():
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE (e.g. farm.workers=4)")
        keys = [k.strip() for k in path.split(".")]
        node_cls: type | None = cls
        table = out
        for i, key in enumerate(keys):
            last = i == len(keys) - 1
            if node_cls is not None:
                known = {f.name: f for f in fields(node_cls)}
                where = "[" + ".".join(keys[:i]) + "]" if i else "config"
                _refuse_unknown({key: None}, known, f"--set {path}: {where}")
                f = known[key]
                if _is_section(f):
                    if last:
                        raise ConfigError(f"--set {path}: [{path}] is a section; set one of its keys")
                    node_cls = _hints(node_cls)[key]
                elif not last:
                    hint = _hints(node_cls)[key]
                    if not (hint is dict or typing.get_origin(hint) in (dict, Mapping)):
                        raise ConfigError(f"--set {path}: {'.'.join(keys[:i + 1])} is a value, not a section")
                    node_cls = None  # a free-form table ([verify]): its job checks the keys
            if last:
                table[key] = parse_literal(text.strip())
            else:
                nxt = table.get(key)
                if not isinstance(nxt, dict):
                    nxt = table[key] = {}
                table = nxt
    return out


def _deep_copy(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _deep_copy(v) if isinstance(v, Mapping) else v for k, v in d.items()}


def read_toml(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        return tomllib.loads(p.read_text())
    except OSError as e:
        raise ConfigError(f"cannot read config {str(p)!r}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not TOML: {e}") from None


def load_job_config(cls: type, path: str | Path | None = None, overrides: Iterable[str] = (),
                    base: Mapping[str, Any] | None = None) -> Any:
    """`cls` from the TOML at `path` (or `base`, or nothing), then `overrides` applied and checked."""
    data = read_toml(path) if path is not None else _deep_copy(base or {})
    overrides = list(overrides)
    try:
        return build(cls, apply_overrides(cls, data, overrides))
    except ConfigError as e:
        message = str(e)
        for item in reversed(overrides):  # the last --set of a key is the one that took effect
            key = item.partition("=")[0].strip()
            section, _, name = key.rpartition(".")
            # a plain key, or a key of a free-form table ([verify]): a bad value given on the command
            # line names the --set that gave it, not the file
            if message.startswith((f"{key}: ", f"[{section}]: {name} ")):
                raise ConfigError(f"--set {item}: {message}") from None
        raise ConfigError(f"{path}: {e}" if path is not None and not message.startswith(str(path)) else message) \
            from None


def describe(cls: type, prefix: str = "", defaults: Mapping[str, Any] | None = None) -> str:
    """Every key of a config, with its default, bounds and documentation (for `--help-config`)."""
    lines = []
    hints = _hints(cls)
    for f in fields(cls):
        key = f"{prefix}{f.name}"
        if _is_section(f):
            lines.append(f"[{key}]  {f.metadata.get('doc', '')}")
            lines.append(describe(hints[f.name], key + ".", f.metadata.get("defaults")))
            continue
        if defaults and f.name in defaults:
            default = repr(defaults[f.name])
        elif f.default is not _MISSING:
            default = repr(f.default)
        elif f.default_factory is not _MISSING:
            default = repr(f.default_factory())
        else:
            default = "required"
        bounds = [f"{op} {f.metadata[k]}" for k, op in (("ge", ">="), ("gt", ">"), ("le", "<="))
                  if f.metadata.get(k) is not None]
        lines.append(f"  {key} = {default}  ({_type_name(hints[f.name])}{'; ' + ', '.join(bounds) if bounds else ''})"
                     f"  {f.metadata.get('doc', '')}")
    return "\n".join(lines)


def override(config: Any, **changes: Any) -> Any:
    """A copy of a (frozen) config with top-level fields or `section__field` keys replaced."""
    top: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for k, v in changes.items():
        if "__" in k:
            s, _, name = k.partition("__")
            nested.setdefault(s, {})[name] = v
        else:
            top[k] = v
    for s, vals in nested.items():
        top[s] = dataclasses.replace(getattr(config, s), **vals)
    return dataclasses.replace(config, **top)
