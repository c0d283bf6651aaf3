"""Job configs from TOML: typed fields, unknown keys refused, dotted overrides; the stages' small
pieces (module keys, the cap, the hybrid retry rule, decontamination against the real checkout)."""

from __future__ import annotations

import pytest
import synthetic

from jobs.curate import CurateJobConfig
from jobs.curate import main as curate_main
from jobs.sections import ConfigError, load_job_config
from jobs.sft import SFTJobConfig
from kgym.contract import Gate, Verdict
from kgym.curation import Drop
from kgym.curation.cap import cap_per_module
from kgym.curation.classify import retry_as_hybrid
from kgym.curation.rows import code_key


def test_curate_job_config_loads_with_overrides(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('backend = "local"\n[curate]\ninput = "x.jsonl"\nreplay = ["a", "b"]\n[verify]\ntimed_runs = 3\n')
    c = load_job_config(CurateJobConfig, p, ["farm.workers=4", "curate.max_tokens=8192", "curate.kernelbench=/kb",
                                             "records.run_id=again"])
    assert c.farm.workers == 4 and c.backend == "local" and c.curate.max_tokens == 8192
    assert c.curate.replay == ("a", "b") and c.curate.kernelbench == "/kb" and c.verify == {"timed_runs": 3}
    assert c.records.run_id == "again" and c.records.job_id == "curate"


@pytest.mark.parametrize("text,sets,match", [
    ('[curate]\ninput = "x"\ninptu = 1\n', [], "inptu"),
    ('backend = "cloud"\n[curate]\ninput = "x"\n', [], "backend"),
    ('[curate]\ninput = "x"\n', ["curate.max_tokens=many"], "max_tokens"),
    ('[curate]\ninput = "x"\n[verify]\ntimed = 3\n', [], "timed"),
    ('[curate]\ninput = "x"\n', ["farm.nope=1"], "nope"),
    ('[curate]\ninput = "x"\nmax_per_module = 0\n', [], "max_per_module"),
])
def test_bad_configs_are_refused(tmp_path, text, sets, match):
    p = tmp_path / "c.toml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_job_config(CurateJobConfig, p, sets)


def test_jobs_exit_2_on_a_bad_config(tmp_path, capsys):
    p = tmp_path / "c.toml"
    p.write_text('[curate]\ninptu = "x"\n')
    assert curate_main(["--config", str(p)]) == 2
    assert "inptu" in capsys.readouterr().err


def test_shipped_configs_load():
    for name in ("curate_sample.toml", "curate_tiny.toml"):
        load_job_config(CurateJobConfig, f"jobs/configs/{name}")
    load_job_config(SFTJobConfig, "jobs/configs/sft.toml")


def test_sft_config_defaults_are_the_study_recipe():
    c = load_job_config(SFTJobConfig, None, ["dataset=d.parquet", "model=m"])
    assert (c.lora.r, c.epochs, c.learning_rate, c.max_length) == (8, 2.0, 2e-4, 4096)


def test_module_keys_ignore_formatting_and_comments():
    assert code_key("x = 1  # one\n\n") == code_key("x=1\n")
    assert code_key("x = 1\n") != code_key("x = 2\n")


def test_cap_keeps_the_first_answers_per_module():
    items = [("m", "a"), ("m", "a"), ("m", "b"), ("m", "c"), ("n", "a")]
    kept, dropped = cap_per_module(items, 2, module_key=lambda i: i[0], answer_key=lambda i: i[1])
    assert kept == [("m", "a"), ("m", "b"), ("n", "a")]
    assert [d for _, d in dropped] == [Drop.DUPLICATE, Drop.OVER_CAP]


def test_only_isolation_failures_of_pure_answers_are_retried_as_hybrids():
    iso = Verdict().fail(Gate.ISOLATION, "aten::addmm")
    assert retry_as_hybrid(iso, was_hybrid=False)
    assert not retry_as_hybrid(iso, was_hybrid=True)
    assert not retry_as_hybrid(Verdict().fail(Gate.CORRECTNESS, "x"), was_hybrid=False)
    assert not retry_as_hybrid(Verdict(passed=True), was_hybrid=False)


@pytest.mark.skipif(not synthetic.KB_PROBLEM.is_file(), reason="no KernelBench checkout at ../shared/kernelbench")
def test_decontamination_against_levels_1_and_2():
    from kgym.curation.decontam import Contamination

    check = Contamination(synthetic.KERNELBENCH, (1, 2))
    assert len(check.problems) == 200
    near = check.nearest(synthetic.KB_PROBLEM.read_text())
    assert near.contaminated and near.score == 1.0 and near.problem == "level1/19_ReLU.py"
    for row in synthetic.rows(False):
        if row["uuid"] in ("good-1", "hybrid", "wrong", "long"):
            assert not check.nearest(row["python_code"]).contaminated, row["uuid"]


def test_parquet_and_jsonl_sources_read_alike(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kgym.curation.rows import read_source

    rows = synthetic.rows(False)
    jsonl = synthetic.write(tmp_path / "kb.jsonl", False)
    parquet = tmp_path / "kb.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    a, b = read_source(str(jsonl)), read_source(str(parquet))
    assert [(s.uuid, s.module_key, s.answer_key) for s in a] == [(s.uuid, s.module_key, s.answer_key) for s in b]
    assert sum(s.answer_key is None for s in a) == 1  # the no-answer row
