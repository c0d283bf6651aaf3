"""The one loader (`kgym.settings`) on small configs: an inline section's keys sit in its parent's table
(with the job's own defaults for them), an internal field is no key and is not listed, a `StrEnum`
setting takes its values' names, a component's own check is a `ConfigError` naming the section, and a
partial table (`[verify]`) holds exactly the keys given, each checked as its component declares it.
The jobs' configs are tested in tests/farm/test_job_config.py and tests/rljob/test_rljob_config.py."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import pytest

from kgym.settings import (
    ConfigError,
    apply_overrides,
    build,
    describe,
    internal,
    load_config,
    option,
    partial,
    section,
)


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


@dataclass(frozen=True)
class Flat:
    workers: int = option(1, "workers", ge=1)
    colour: Colour = option(Colour.RED, "a colour")
    spares: int | None = option(None, "spares", ge=0)
    secret: bytes | None = internal(None, "set by code")

    def __post_init__(self) -> None:
        if self.workers > 10:
            raise ValueError("too many workers")


@dataclass(frozen=True)
class WithPartial:
    outer: Outer = section(Outer, "the outer table")
    some: dict = partial(Flat, "some of Flat's keys; a key left out: Flat's default")


def test_a_partial_table_holds_only_the_keys_given_checked_as_declared():
    assert WithPartial().some == {} and build(WithPartial, {}).some == {}
    cfg = load_config(WithPartial, None, ["some.spares=2"])
    assert cfg.some == {"spares": 2}  # workers and colour not filled in: the component's defaults stay its own
    # the values as given, checked (a name taken as its enum member, as in any table)
    assert build(WithPartial, {"some": {"workers": 3, "colour": "blue"}}).some == {"workers": 3, "colour": "blue"}
    with pytest.raises(TypeError, match="without sections"):
        partial(Outer, "Outer has an inline section")
    with pytest.raises(ConfigError, match=r"\[some\]: unknown key 'secret'; allowed: colour, spares, workers"):
        build(WithPartial, {"some": {"secret": "x"}})
    with pytest.raises(ConfigError, match="some.spares: -1 is below its lower bound 0"):
        load_config(WithPartial, None, ["some.spares=-1"])
    with pytest.raises(ConfigError, match="some.workers: 'two' is not a int"):
        build(WithPartial, {"some": {"workers": "two"}})
    with pytest.raises(ConfigError, match=r"\[some\]: too many workers"):  # the component's own check
        build(WithPartial, {"some": {"workers": 11}})
    text = describe(WithPartial)
    assert "[some]  some of Flat's keys" in text and "some.workers = 1" in text and "some.secret" not in text


def test_the_jobs_verify_table_is_the_verifiers_settings_as_given():
    """[verify] of every farm job: VerifyConfig's settings (device is the worker's, no key), only the
    keys given handed on (they are requests' overrides, part of some evaluation ids)."""
    import dataclasses

    from jobs.eval import EvalJobConfig
    from jobs.verify_config import VerifyJobConfig
    from kgym.verify.config import VerifyConfig

    for job in (VerifyJobConfig, EvalJobConfig):
        [f] = [f for f in dataclasses.fields(job) if f.name == "verify"]
        assert f.metadata["partial"] is VerifyConfig
    base = {"input": "rows.jsonl"}
    cfg = load_config(VerifyJobConfig, None, ["verify.defer_compile=false", "verify.timed_runs=5"], base=base)
    assert cfg.verify == {"defer_compile": False, "timed_runs": 5}  # an explicit false stays given
    with pytest.raises(ConfigError, match="unknown key 'device'"):
        load_config(VerifyJobConfig, None, ["verify.device=\"cpu\""], base=base)
    with pytest.raises(ConfigError, match="verify.timeout_s: -1 must be above 0"):
        load_config(VerifyJobConfig, None, ["verify.timeout_s=-1"], base=base)
    with pytest.raises(ConfigError, match=r"\[verify\]: unknown key 'timed'"):
        VerifyJobConfig(input="rows.jsonl", verify={"timed": 3})  # built in code: the same checks
