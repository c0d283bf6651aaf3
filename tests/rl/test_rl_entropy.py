"""The adaptive entropy bonus: rises below the target, falls above it, stays in bounds, gates, resumes."""

import pytest

from kgym.rl import EntropyBonusConfig, EntropyController


def test_rises_below_target_and_falls_above_within_bounds():
    c = EntropyController(EntropyBonusConfig(target=1.0, delta=0.01, coef_max=0.03))
    assert c.coef_for_step() == 0.0
    for _ in range(5):
        c.update(0.5)
    assert c.coef == pytest.approx(0.03)  # capped at coef_max
    assert c.coef_for_step() == pytest.approx(0.03)
    c.update(1.5)
    assert c.coef == pytest.approx(0.02)
    assert c.coef_for_step() == 0.0  # gated: entropy is above target, no bonus this step
    for _ in range(5):
        c.update(1.5)
    assert c.coef == 0.0  # floored at coef_min


def test_target_none_calibrates_to_first_entropy():
    c = EntropyController(EntropyBonusConfig(delta=0.01))
    c.update(2.0)
    assert c.target == 2.0 and c.coef == 0.0
    c.update(1.9)
    assert c.coef == pytest.approx(0.01)


def test_fixed_bonus_and_state_round_trip():
    fixed = EntropyController(EntropyBonusConfig(adaptive=False, coef=0.02))
    fixed.update(0.1)
    assert fixed.coef_for_step() == 0.02
    a = EntropyController(EntropyBonusConfig(target=1.0))
    a.update(0.2)
    b = EntropyController(EntropyBonusConfig(target=1.0))
    b.load_state_dict(a.state_dict())
    assert b.state_dict() == a.state_dict() and b.coef_for_step() == a.coef_for_step()


def test_nan_entropy_leaves_state_alone():
    c = EntropyController(EntropyBonusConfig(target=1.0))
    c.update(float("nan"))
    assert c.last_entropy is None and c.coef == 0.0


@pytest.mark.parametrize("kwargs", [dict(coef_max=2.0), dict(coef=0.5), dict(delta=0.0), dict(target=-1.0),
                                    dict(coef_min=0.2, coef_max=0.1)])
def test_config_bounds(kwargs):
    with pytest.raises(ValueError):
        EntropyBonusConfig(**kwargs)
