"""The one loader (`kgym.settings`) on small configs: an inline section's keys sit in its parent's table
(with the job's own defaults for them), an internal field is no key and is not listed, a `StrEnum`
setting takes its values' names, and a component's own check is a `ConfigError` naming the section.
The jobs' configs are tested in tests/farm/test_job_config.py and tests/rljob/test_rljob_config.py."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import pytest

from kgym.settings import ConfigError, apply_overrides, build, describe, internal, load_config, option, section


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Inner:
    spares: int | None = option(None, "spares", ge=0)
    secret: bytes | None = internal(None, "set by code")


@dataclass(frozen=True)
class Outer:
    workers: int = option(1, "workers", ge=1)
    colour: Colour = option(Colour.RED, "a colour")
    inner: Inner = section(Inner, "the inner keys, in this table", inline=True)

    def __post_init__(self) -> None:
        if self.workers > 10:
            raise ValueError("too many workers")


@dataclass(frozen=True)
class Job:
    outer: Outer = section(Outer, "the outer table", spares=3)


def test_inline_keys_sit_in_the_parent_table_with_the_jobs_defaults():
    cfg = build(Job, {"outer": {"workers": 2}})
    assert cfg.outer.workers == 2 and cfg.outer.inner.spares == 3  # the job's default for an inline key
    assert Job().outer.inner.spares == 3  # the same without a table
    assert load_config(Job, None, ["outer.spares=5"]).outer.inner.spares == 5
    with pytest.raises(ConfigError, match=r"\[outer\]: unknown key 'inner'"):
        build(Job, {"outer": {"inner": {"spares": 1}}})


def test_internal_fields_are_no_keys_and_not_listed():
    with pytest.raises(ConfigError, match="unknown key 'secret'; allowed: colour, spares, workers"):
        build(Job, {"outer": {"secret": "x"}})
    with pytest.raises(ConfigError, match="unknown key 'secret'"):
        apply_overrides(Job, {}, ["outer.secret=1"])
    text = describe(Job)
    assert "outer.spares = 3" in text and "secret" not in text and "one of red, blue" in text


def test_enums_bounds_and_the_components_own_check():
    assert build(Job, {"outer": {"colour": "blue"}}).outer.colour is Colour.BLUE
    with pytest.raises(ConfigError, match="outer.colour: 'green' is not one of red, blue"):
        build(Job, {"outer": {"colour": "green"}})
    with pytest.raises(ConfigError, match="outer.spares: -1 is below its lower bound 0"):
        load_config(Job, None, ["outer.spares=-1"])
    with pytest.raises(ConfigError, match="outer: too many workers"):
        build(Job, {"outer": {"workers": 11}})
