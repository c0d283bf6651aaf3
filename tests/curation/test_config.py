"""Job configs from TOML: typed fields, unknown keys refused, dotted overrides; the stages' small
pieces (module keys, the cap, the hybrid retry rule, decontamination against the real checkout)."""

from __future__ import annotations

import pytest
import synthetic

from jobs.curate import main as curate_main
from jobs.sft import SFTJobConfig
from kgym.contract import Gate, Verdict
from kgym.curation import CurateConfig, Drop
from kgym.curation.cap import cap_per_module
from kgym.curation.classify import retry_as_hybrid
from kgym.curation.rows import code_key
from kgym.curation.toml_config import ConfigError, load


def test_curate_config_loads_with_overrides(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('input = "x.jsonl"\nreplay = ["a", "b"]\n[farm]\nbackend = "local"\n[verify]\ntimed_runs = 3\n')
    c = load(CurateConfig, p, ["farm.workers=4", "max_tokens=8192", "kernelbench=/kb"])
    assert c.farm.workers == 4 and c.farm.backend == "local" and c.max_tokens == 8192
    assert c.replay == ("a", "b") and c.kernelbench == "/kb" and c.verify == {"timed_runs": 3}


@pytest.mark.parametrize("text,sets,match", [
    ('input = "x"\ninptu = 1\n', [], "unknown keys"),
    ('input = "x"\n[farm]\nbackend = "cloud"\n', [], "farm.backend"),
    ('input = "x"\n', ["max_tokens=many"], "expected int"),
    ('input = "x"\n[verify]\ntimed = 3\n', [], "not VerifyConfig fields"),
    ('input = "x"\n', ["farm.nope=1"], "unknown keys"),
])
def test_bad_configs_are_refused(tmp_path, text, sets, match):
    p = tmp_path / "c.toml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load(CurateConfig, p, sets)


def test_jobs_exit_2_on_a_bad_config(tmp_path, capsys):
    p = tmp_path / "c.toml"
    p.write_text('inptu = "x"\n')
    assert curate_main(["--config", str(p)]) == 2
    assert "unknown keys" in capsys.readouterr().err


def test_sft_config_defaults_are_the_study_recipe():
    c = load(SFTJobConfig, None, ["dataset=d.parquet", "model=m", "lora.r=8"])
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
