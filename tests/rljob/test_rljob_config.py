"""RLJobConfig: the checked-in configs load, every key is documented, unknown keys and values out of
bounds are refused with a message naming them, the study's defaults, and the final-stage floor."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from rljob_helpers import REPO

from jobs.rl_config import RLJobConfig, load_config
from jobs.sections import ConfigError
from kgym.settings import is_section

MODEL = 'model="/models/x"'


@pytest.mark.parametrize("name", ["rl.toml", "rl_tiny.toml"])
def test_checked_in_configs_load(name):
    cfg = load_config(REPO / "jobs" / "configs" / name, [MODEL])
    assert cfg.model == "/models/x"
    cfg.rollout_config()  # the components' settings build from it
    cfg.learner_config()


def test_study_defaults():
    cfg = load_config(None, [MODEL])
    assert (cfg.steps, cfg.tasks_per_step, cfg.episodes.group_size) == (300, 1, 8)
    assert cfg.episodes.single_fraction == 0.25 and cfg.episodes.reward.baseline == "eager"
    assert set(cfg.curriculum.hybrid_families) == {"fused_hybrid", "gemm_epilogue"}
    assert cfg.curriculum.final_floor_full > cfg.curriculum.floor_full
    assert cfg.eval.samples == 3 and cfg.eval.every == 10
    lc = cfg.learner_config()
    assert (lc.lr, lc.loss_config().beta, lc.total_steps, lc.temperature) == (1e-5, 0.08, 300, 1.0)
    rc = cfg.rollout_config()
    assert rc.sampling.temperature == 1.0 and rc.sampling.max_tokens == 6144 and rc.sampling.group_size == 8
    assert rc.episode.reward.baseline == "eager"
    assert load_config(None, [MODEL, 'episodes.baseline="joint"']).rollout_config().episode.reward.baseline == "joint"


@pytest.mark.parametrize("override, words", [
    ("episodes.group_sise=8", ["group_sise", "allowed", "group_size"]),
    ("stepz=3", ["stepz", "allowed"]),
    ("episodes.group_size=1", ["group_size", "lower bound"]),
    ("curriculum.floor_full=1.5", ["floor_full", "upper bound"]),
    ("offpolicy.max_staleness=-1", ["max_staleness"]),
    ('episodes.baseline="fast"', ["baseline", "eager"]),
    ("steps=true", ["steps", "not a int"]),
    ("curriculum.family_weights={gemms=1}", ["gemms", "unknown families"]),
    ("engine.max_loras=2", None),
])
def test_bad_values_are_refused(override, words):
    if words is None:  # a valid value: loads
        load_config(None, [MODEL, override])
        return
    with pytest.raises(ConfigError) as e:
        load_config(None, [MODEL, override])
    for w in words:
        assert w in str(e.value), str(e.value)


def test_model_is_required_and_window_must_fit():
    with pytest.raises(ConfigError, match="model: required"):
        load_config(None, [])
    with pytest.raises(ConfigError, match="max_loras"):
        load_config(None, [MODEL, "offpolicy.adapter_window=2"])


def test_unknown_key_in_a_file(tmp_path):
    p = tmp_path / "rl.toml"
    p.write_text('model = "/m"\n[resample]\nmax_round = 3\n')
    with pytest.raises(ConfigError, match="unknown key 'max_round'"):
        load_config(p)


def test_every_field_documented():
    def walk(cls):
        for f in dataclasses.fields(cls):
            assert f.metadata.get("doc"), f"{cls.__name__}.{f.name} has no doc"
            if is_section(f):
                walk(typing.get_type_hints(cls)[f.name])
    walk(RLJobConfig)


def test_final_stage_weights_full_tasks_up():
    cfg = load_config(None, [MODEL, "steps=300"]).curriculum
    assert cfg.floor_at(1, 300) == cfg.floor_full
    assert cfg.floor_at(200, 300) == cfg.floor_full
    assert cfg.floor_at(202, 300) == cfg.final_floor_full
    assert cfg.floor_at(300, 300) == cfg.final_floor_full


def test_choice_file_errors(tmp_path):
    bad = tmp_path / "c.json"
    bad.write_text('{"not": "a list"}')
    cfg = load_config(None, [MODEL, f'sampling.choice_file="{bad}"'])
    with pytest.raises(ConfigError, match="list of strings"):
        cfg.rollout_config()
