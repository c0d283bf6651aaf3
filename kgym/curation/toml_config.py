"""Typed job configs from TOML: nested dataclasses, unknown keys refused, dotted `--set` overrides.

    config = load(CurateConfig, "jobs/configs/curate_sample.toml", ["farm.workers=4", "max_tokens=8192"])

A table fills a dataclass field whose type is a dataclass; a list fills a tuple field; a `dict`
field takes a table as it is (it is checked by whoever reads it, e.g. `VerifyConfig(**verify)`).
Scalars are checked against the field's type (int, float, str, bool, or None where the field allows
it). An override's value is read as a TOML value (`4`, `true`, `"x"`, `[1, 2]`), or as a string when
it is not one. Used by `jobs/curate.py` and `jobs/sft.py` until a shared job config lands in jobs/.
Does not know any job's fields.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    pass


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """`a.b=value` sets data["a"]["b"] (tables made as needed)."""
    data = dict(data)
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r}: write key=value (dotted keys for tables)")
        key, value = item.split("=", 1)
        parts = key.strip().split(".")
        node = data
        for p in parts[:-1]:
            node[p] = dict(node.get(p) or {})
            node = node[p]
        node[parts[-1]] = _parse_value(value.strip())
    return data


def _check(value: Any, typ: Any, where: str) -> Any:
    origin = typing.get_origin(typ)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(typ)
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _check(value, a, where)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0] if errors else f"{where}: bad value {value!r}")
    if dataclasses.is_dataclass(typ):
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a table, got {value!r}")
        return from_dict(typ, value, where)
    if origin is tuple or typ is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        args = typing.get_args(typ)
        inner = args[0] if args else Any
        return tuple(_check(v, inner, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict or typ is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a table, got {value!r}")
        return dict(value)
    if typ is Any:
        return value
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if typ in (int, float) and isinstance(value, bool):
        raise ConfigError(f"{where}: expected {typ.__name__}, got {value!r}")
    if isinstance(typ, type) and not isinstance(value, typ):
        raise ConfigError(f"{where}: expected {typ.__name__}, got {value!r}")
    return value


def from_dict(cls: type[T], data: dict[str, Any], where: str = "config") -> T:
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - known
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(known)})")
    kwargs = {k: _check(v, hints[k], f"{where}.{k}" if where != "config" else k) for k, v in data.items()}
    try:
        return cls(**kwargs)
    except TypeError as e:
        raise ConfigError(f"{where}: {e}") from None
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from None


def load(cls: type[T], path: str | Path | None, overrides: list[str] = ()) -> T:
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text())
        except OSError as e:
            raise ConfigError(f"cannot read config {str(p)!r}: {e}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{p}: not TOML: {e}") from None
    return from_dict(cls, apply_overrides(data, list(overrides)))
