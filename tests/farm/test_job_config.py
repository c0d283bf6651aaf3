"""The jobs' typed configs (`jobs.sections`) without Ray: unknown keys refused in TOML and in `--set`
with the allowed ones named, values read as TOML literals, types and bounds checked, every field
documented; where relative record paths go (`jobs.context.records_root`), inside and outside
`ray job submit`."""

from __future__ import annotations

from dataclasses import fields

import pytest

from jobs.context import SUBMIT_DIR_ENV, SUBMITTED_JOB_ENV, records_root
from jobs.demo import DemoConfig
from jobs.eval import EvalJobConfig
from jobs.sections import ConfigError, apply_overrides, describe, load_job_config, parse_literal
from jobs.verify_config import VerifyJobConfig, load_config

JOBS = (VerifyJobConfig, EvalJobConfig, DemoConfig)


def test_set_overrides_are_toml_literals_checked_like_the_file(tmp_path):
    (tmp_path / "j.toml").write_text('input = "rows.jsonl"\n[farm]\nworkers = 2\n[verify]\ntimed_runs = 5\n')
    cfg = load_config(tmp_path / "j.toml", ["farm.workers=4", "farm.use_gpus=false", "verify.timed_runs=3",
                                            'records.out="s3://bucket/runs"', "records.run_id=again",
                                            "farm.call_timeout_s=60", "farm.kept_results=500"])
    assert (cfg.farm.workers, cfg.farm.use_gpus, cfg.verify, cfg.farm.call_timeout_s) == (4, False, {"timed_runs": 3},
                                                                                          60)
    assert cfg.records.out == "s3://bucket/runs" and cfg.records.run_id == "again"  # a bare word is a string
    assert cfg.records.job_id == "verify"  # the job's own default for a key the table leaves out
    pool = cfg.farm.with_verify(cfg.verify)
    assert pool.workers == 4 and pool.worker.verify == {"timed_runs": 3} and pool.kept_results == 500
    assert parse_literal("[1, 2]") == [1, 2] and parse_literal("{a = 1}") == {"a": 1} and parse_literal("x/y") == "x/y"


@pytest.mark.parametrize("sets, message", [
    (["farm.wokers=4"], r"--set farm.wokers: \[farm\]: unknown key 'wokers'; allowed: .*max_attempts.*workers"),
    (["colour=1"], r"unknown key 'colour'; allowed: farm, input, metrics, ray, records, size, verify"),
    (["farm=1"], r"\[farm\] is a section"),
    (["size.x=1"], r"size is a value, not a section"),
    (["farm.workers"], r"expected KEY=VALUE"),
    (["farm.workers=0"], r"farm.workers: 0 is below its lower bound 1"),
    (["farm.workers=two"], r"farm.workers: 'two' is not a int"),
    (["farm.max_in_flight=true"], r"not a int"),  # a bool is never an int
    (["farm.call_timeout_s=0"], r"must be above 0"),
    (["size=huge"], r"size: 'huge' is not one of tiny, small, full"),
    (["verify.timed_runz=3"], r"\[verify\]: unknown key 'timed_runz'; allowed: .*timed_runs"),
])
def test_bad_overrides_are_refused_naming_the_key(sets, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, ["input=x"] + sets)


def test_unknown_keys_in_the_file_name_where_and_what_is_allowed(tmp_path):
    (tmp_path / "j.toml").write_text('input = "x"\n[records]\nroot = "out"\n')
    with pytest.raises(ConfigError, match=r"j.toml: \[records\]: unknown key 'root'; allowed: flush_rows, "
                                          r"flush_seconds, job_id, out, run_id"):
        load_config(tmp_path / "j.toml")
    with pytest.raises(ConfigError, match="kernelbench: required"):
        load_job_config(EvalJobConfig, None, ['generations="g.jsonl"'])
    cfg = load_job_config(EvalJobConfig, None, ['kernelbench="kb"', 'generations="g"', "hybrid_levels=[2]"])
    assert cfg.hybrid_levels == (2,) and cfg.records.out == "out/eval"


@pytest.mark.parametrize("job", JOBS, ids=lambda c: c.__name__)
def test_every_field_of_every_job_is_documented(job):
    """Every field has a doc; every setting (not the internal fields, which code sets) is listed by
    --help-config under its key (an inline section's keys under its parent's, a partial table's under
    the table)."""
    text = describe(job)

    def walk(cls, prefix=""):
        for f in fields(cls):
            assert f.metadata.get("doc"), f"{cls.__name__}.{f.name} has no doc"
            if f.metadata.get("section"):
                walk(f.default_factory().__class__, prefix if f.metadata.get("inline") else prefix + f.name + ".")
            elif f.metadata.get("partial"):  # [verify]: the component's keys, each listed under the table
                walk(f.metadata["partial"], prefix + f.name + ".")
            elif f.metadata.get("internal"):
                assert f"{prefix}{f.name} = " not in text
            else:
                assert f"{prefix}{f.name} = " in text

    walk(job)
    assert apply_overrides(job, {}, []) == {}


def test_relative_record_paths_outside_and_inside_a_submitted_job(tmp_path):
    assert records_root("s3://bucket/runs", env={SUBMITTED_JOB_ENV: "{}"}) == "s3://bucket/runs"
    assert records_root("/abs/runs", env={SUBMITTED_JOB_ENV: "{}"}) == "/abs/runs"
    assert records_root("out/r", env={}, cwd=str(tmp_path)) == str(tmp_path / "out" / "r")
    assert records_root("out/r", env={SUBMITTED_JOB_ENV: "{}", SUBMIT_DIR_ENV: str(tmp_path)}) == \
        str(tmp_path / "out" / "r")
    with pytest.raises(ConfigError, match="relative path.*ray job submit.*KGYM_SUBMIT_DIR"):
        records_root("out/r", env={SUBMITTED_JOB_ENV: "{}"}, cwd="/tmp/ray/session/runtime_resources/x")
