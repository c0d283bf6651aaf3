"""Settings: typed, nested configs read from TOML, unknown keys refused, dotted overrides checked alike.

    cfg = load_config(VerifyJobConfig, "job.toml", ["farm.workers=4", 'records.out="s3://b/runs"'])

A job's config is a frozen dataclass whose fields are values or sections, and a section is the
component's own config (`PoolConfig` is `[farm]`, `LearnerConfig` is `[learner]`, ...): each setting
is declared once, where the component that reads it is, with its default, its documentation and its
bounds. The declarations:
- `option(default, doc, ge=, le=, gt=, choices=)`: a setting. `choices` may be a callable, so a module
  that knows them (and imports torch) is imported only when a value is checked;
- `section(cls, doc, **defaults)`: a nested table of `cls`; `defaults` are the job's own defaults for
  some of its keys (the RL job's `run_id = "rl"`); `inline=True` reads `cls`'s keys from the parent's
  table instead (a pool's worker settings sit in `[farm]` beside the pool's own);
- `internal(default, doc)`: a field of the component that is no setting: the job or the component
  sets it (the model path the RL job hands its learner, a per-farm secret). It is refused as a key and
  left out of `--help-config`;
- `partial(cls, doc)`: a table of some of `cls`'s settings (`[verify]`: `VerifyConfig`'s), each key
  checked as `cls` declares it and `cls`'s own checks run on them; the value is the dict of the keys
  given, so a key left out stays `cls`'s default wherever the table is handed on (a farm's workers,
  requests' overrides: the keys given are part of some evaluation ids).
Loading a table: a key no setting has is refused, naming the key, where it was and the keys allowed
there; a value of the wrong type is refused (an int is accepted for a float, a bool never for an int,
a name for a `StrEnum`); a value outside its bounds or choices is refused; a required setting that is
missing is refused; then the dataclass checks itself (`__post_init__`: a `ValueError` or `TypeError`
is reported as a `ConfigError` naming the section). `--set a.b=v` overrides go through the same
checks: the key path must exist, and `v` is read as a TOML literal (`4`, `true`, `"text"`, `[1, 2]`,
`{a = 1}`); a value that is not one is taken as a bare string (`--set records.out=s3://b/runs`).
`describe(cls)` prints every setting with its default, bounds and doc (`--help-config`).

Imports neither torch nor Ray, and no component: a job's config module imports the sections it is made
of. Does not run anything.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field, fields
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A bad config file, key or value: the job exits 2 with this message."""


_MISSING = dataclasses.MISSING


def option(default: Any = _MISSING, doc: str = "", *, ge: float | None = None, le: float | None = None,
           gt: float | None = None, choices: Callable[[], Iterable[Any]] | Iterable[Any] | None = None,
           factory: Callable[[], Any] | None = None) -> Any:
    """A setting: its default (or `factory`), its documentation and its bounds."""
    meta = {"doc": doc, "ge": ge, "le": le, "gt": gt, "choices": choices}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def internal(default: Any = _MISSING, doc: str = "", *, factory: Callable[[], Any] | None = None) -> Any:
    """A field that is no setting: set by the code that builds the config, never by a TOML key."""
    meta = {"doc": doc, "internal": True}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def section(cls: type, doc: str, *, inline: bool = False, **defaults: Any) -> Any:
    """A nested section of type `cls` (a TOML table, or with `inline` the parent's own table);
    `defaults` are this job's own defaults for some of its keys (a key the table leaves out takes them)."""
    return field(default_factory=lambda: build(cls, defaults, cls.__name__),  # an inline key's default too
                 metadata={"doc": doc, "section": True, "inline": inline, "defaults": defaults})


def partial(cls: type, doc: str) -> Any:
    """A table of some of the settings of `cls`, a flat config (no sections); its value is the dict of
    the keys given, checked (`check_partial`)."""
    if any(is_section(f) for f in fields(cls)):
        raise TypeError(f"partial({cls.__name__}): a partial table takes a config without sections")
    return field(default_factory=dict, metadata={"doc": doc, "partial": cls})


def is_section(f: dataclasses.Field) -> bool:
    return bool(f.metadata.get("section"))


def is_inline(f: dataclasses.Field) -> bool:
    return bool(f.metadata.get("inline"))


def is_setting(f: dataclasses.Field) -> bool:
    """A key of the table: every field but internal ones and inline sections (whose keys are)."""
    return not f.metadata.get("internal") and not is_inline(f)


def hints(cls: type) -> dict[str, Any]:
    """The resolved type of each field. A component may name a type it imports only for type
    checking (a torch-importing config of an internal field): such a field resolves to `Any`."""
    try:
        return typing.get_type_hints(cls)
    except NameError:
        pass
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        scope = vars(sys.modules[klass.__module__])
        for name, text in vars(klass).get("__annotations__", {}).items():
            try:
                out[name] = eval(text, scope) if isinstance(text, str) else text  # noqa: S307 - annotations
            except NameError:
                out[name] = Any
    return out


def settings_of(cls: type) -> dict[str, tuple[type, dataclasses.Field]]:
    """Every key of `cls`'s table -> (the dataclass declaring it, its field), inline sections' keys
    included. Raises TypeError when an inline section repeats a key (two settings, one name)."""
    out: dict[str, tuple[type, dataclasses.Field]] = {}
    for f in fields(cls):
        if f.metadata.get("internal"):
            continue
        if is_inline(f):
            for key, where in settings_of(hints(cls)[f.name]).items():
                if key in out:
                    raise TypeError(f"{cls.__name__}: key {key!r} twice (inline section {f.name})")
                out[key] = where
        else:
            if f.name in out:
                raise TypeError(f"{cls.__name__}: key {f.name!r} twice")
            out[f.name] = (cls, f)
    return out


# -- checking one value ----------------------------------------------------------------------------
def _enum(hint: Any) -> type[enum.Enum] | None:
    return hint if isinstance(hint, type) and issubclass(hint, enum.Enum) else None


def _type_ok(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, a) for a in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if _enum(hint) is not None:
        return isinstance(value, str) and value in {m.value for m in hint}
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


def type_name(hint: Any) -> str:
    if _enum(hint) is not None:
        return "one of " + ", ".join(m.value for m in hint)
    return str(hint).replace("typing.", "").replace("<class '", "").replace("'>", "")


def _convert(value: Any, hint: Any) -> Any:
    """A checked TOML value as the field wants it: lists as tuples, names as enum members."""
    candidates = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    for h in candidates:
        e = _enum(h)
        if e is not None and isinstance(value, str):
            return e(value)
    wants_tuple = any(typing.get_origin(h) is tuple or h is tuple for h in candidates)
    return tuple(value) if isinstance(value, list) and wants_tuple else value


def check_value(f: dataclasses.Field, hint: Any, value: Any, where: str) -> Any:
    key = f"{where}.{f.name}" if where else f.name
    if not _type_ok(value, hint):
        name = type_name(hint)
        raise ConfigError(f"{key}: {value!r} is not {'' if name.startswith('one of') else 'a '}{name}")
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
    return _convert(value, hint)


# -- loading -------------------------------------------------------------------------------------
def refuse_unknown(table: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}" + (f" (and {unknown[1:]})" if unknown[1:] else "")
                          + f"; allowed: {', '.join(sorted(allowed))}")


def check_partial(cls: type, table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The keys of `table` as `cls` takes them (unknown keys, types and bounds refused, then `cls`'s own
    checks run on the keys given); the keys left out are not filled in."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where or 'config'}: expected a table, got {table!r}")
    known = settings_of(cls)
    refuse_unknown(table, known, f"[{where}]")
    out = {k: check_value(known[k][1], hints(known[k][0])[k], v, where) for k, v in table.items()}
    _construct(cls, dict(out), f"[{where}]")
    return out


def _kwargs(cls: type, data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`cls`'s constructor arguments from `data` (already refused for unknown keys), inline sections
    built from the same table."""
    hint_of = hints(cls)
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.metadata.get("internal"):
            continue
        key = f"{where}.{f.name}" if where else f.name
        if is_inline(f):
            own = set(settings_of(hint_of[f.name]))
            table = {**f.metadata["defaults"], **{k: v for k, v in data.items() if k in own}}
            kwargs[f.name] = _construct(hint_of[f.name], _kwargs(hint_of[f.name], table, where), where)
            continue
        if f.name not in data:
            if f.default is _MISSING and f.default_factory is _MISSING:
                raise ConfigError(f"{key}: required ({f.metadata.get('doc', '')})")
            continue
        if f.metadata.get("partial") is not None:
            kwargs[f.name] = check_partial(f.metadata["partial"], data[f.name], key)
        elif is_section(f):
            table = data[f.name]
            if isinstance(table, Mapping):
                table = {**f.metadata["defaults"], **table}
            kwargs[f.name] = build(hint_of[f.name], table, key)
        else:
            kwargs[f.name] = check_value(f, hint_of[f.name], data[f.name], where)
    return kwargs


def _construct(cls: type, kwargs: dict[str, Any], where: str) -> Any:
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        if isinstance(e, ConfigError):
            raise
        raise ConfigError(f"{where or 'config'}: {e}") from None


def build(cls: type, data: Mapping[str, Any], where: str = "") -> Any:
    """An instance of the config dataclass `cls` from a (TOML) table, every key and value checked."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where or 'config'}: expected a table, got {data!r}")
    refuse_unknown(data, settings_of(cls), f"[{where}]" if where else "config")
    return _construct(cls, _kwargs(cls, data, where), where)


def parse_literal(text: str) -> Any:
    """A TOML literal (`4`, `true`, `"s"`, `[1, 2]`); anything else is the bare string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_overrides(cls: type, data: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """`data` with each `a.b=value` set (a copy); a key path no setting has is refused like a TOML key."""
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
                known = settings_of(node_cls)
                where = "[" + ".".join(keys[:i]) + "]" if i else "config"
                refuse_unknown({key: None}, known, f"--set {path}: {where}")
                owner, f = known[key]
                if is_section(f):
                    if last:
                        raise ConfigError(f"--set {path}: [{path}] is a section; set one of its keys")
                    node_cls = hints(owner)[key]
                elif not last:
                    hint = hints(owner)[key]
                    if not (hint is dict or typing.get_origin(hint) in (dict, Mapping)):
                        raise ConfigError(f"--set {path}: {'.'.join(keys[:i + 1])} is a value, not a section")
                    node_cls = None  # a partial table ([verify]): its keys are checked when it is built
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


def load_config(cls: type, path: str | Path | None = None, overrides: Iterable[str] = (),
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
            sect, _, name = key.rpartition(".")
            # a plain key, or a key of a partial table ([verify]): a bad value given on the command
            # line names the --set that gave it, not the file
            if message.startswith((f"{key}: ", f"[{sect}]: {name} ")):
                raise ConfigError(f"--set {item}: {message}") from None
        raise ConfigError(f"{path}: {e}" if path is not None and not message.startswith(str(path)) else message) \
            from None


def _default_text(f: dataclasses.Field, defaults: Mapping[str, Any] | None) -> str:
    if defaults and f.name in defaults:
        value = defaults[f.name]
    elif f.default is not _MISSING:
        value = f.default
    elif f.default_factory is not _MISSING:
        value = f.default_factory()
    else:
        return "required"
    return repr(value.value if isinstance(value, enum.Enum) else value)


def describe(cls: type, prefix: str = "", defaults: Mapping[str, Any] | None = None) -> str:
    """Every setting of a config, with its default, bounds and documentation (for `--help-config`)."""
    lines = []
    hint_of = hints(cls)
    for f in fields(cls):
        if f.metadata.get("internal"):
            continue
        if is_inline(f):
            lines.append(describe(hint_of[f.name], prefix, {**f.metadata.get("defaults", {}), **(defaults or {})}))
            continue
        key = f"{prefix}{f.name}"
        if is_section(f):
            lines.append(f"[{key}]  {f.metadata.get('doc', '')}")
            lines.append(describe(hint_of[f.name], key + ".", f.metadata.get("defaults")))
            continue
        if f.metadata.get("partial") is not None:  # a key left out is the component's default, shown here
            lines.append(f"[{key}]  {f.metadata.get('doc', '')}")
            lines.append(describe(f.metadata["partial"], key + "."))
            continue
        bounds = [f"{op} {f.metadata[k]}" for k, op in (("ge", ">="), ("gt", ">"), ("le", "<="))
                  if f.metadata.get(k) is not None]
        lines.append(f"  {key} = {_default_text(f, defaults)}  ({type_name(hint_of[f.name])}"
                     f"{'; ' + ', '.join(bounds) if bounds else ''})  {f.metadata.get('doc', '')}")
    return "\n".join(line for line in lines if line)


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
