"""The curriculum: family weights, the ladder's promotions, the unassisted full-size floor, state."""

from __future__ import annotations

import collections
import json

import pytest

from kgym.tasks import FAMILIES, TaskError, operations
from kgym.tasks.curriculum import Curriculum, CurriculumConfig, ladder


def _staged_op() -> str:
    for tid, op in operations().items():
        if len(ladder(op.stages)) >= 2:
            return tid
    pytest.skip("no operation with an assisted stage registered yet")


def test_ladder_puts_assisted_rungs_first():
    assert ladder(("full", "small", "scaffold")) == ["scaffold", "small", "full"]
    assert ladder(("full", "small", "epilogue")) == ["epilogue", "small", "full"]
    assert ladder(("full",)) == ["full"]


def test_family_weights_steer_draws():
    cur = Curriculum(CurriculumConfig(family_weights={"elementwise": 9.0, "kernelbook": 0.0}), seed=1)
    fams = collections.Counter(operations()[cur.draw().task_id].family for _ in range(600))
    assert "kernelbook" not in fams
    others = len(FAMILIES) - 2  # every family but elementwise and kernelbook weighs 1
    assert fams["elementwise"] > 600 * 9 / (9 + others) * 0.7


def test_new_operations_start_assisted_and_floor_keeps_full_size():
    tid = _staged_op()
    fam = operations()[tid].family
    cfg = CurriculumConfig(family_weights={f: (1.0 if f == fam else 0.0) for f in FAMILIES}, floor_full=0.3)
    cur = Curriculum(cfg, seed=2)
    draws = [cur.draw() for _ in range(1000)]
    mine = [d for d in draws if d.task_id == tid]
    floor = [d for d in mine if d.floor]
    assert all(d.stage == "full" for d in floor)
    assert 0.2 < len(floor) / len(mine) < 0.4
    assisted = [d for d in mine if not d.floor]
    assert {d.stage for d in assisted} == {ladder(operations()[tid].stages)[0]}


def test_promotion_after_enough_solves_and_not_before():
    tid = _staged_op()
    rungs = ladder(operations()[tid].stages)
    cur = Curriculum(CurriculumConfig(promote_at=0.5, window=8, min_attempts=4), seed=0)
    assert cur.current_stage(tid) == rungs[0]
    for solved in (True, False, True):
        assert not cur.record(tid, rungs[0], solved)  # 3 attempts < min_attempts
    assert cur.record(tid, rungs[0], True)  # 3 of 4 solved
    assert cur.current_stage(tid) == rungs[1]
    for _ in range(8):
        cur.record(tid, rungs[1], False)
    assert cur.current_stage(tid) == rungs[1]  # no promotion on failures
    assert cur.solve_rate(tid, rungs[1]) == 0.0


def test_solving_full_on_the_floor_promotes_straight_to_full():
    tid = _staged_op()
    cur = Curriculum(CurriculumConfig(window=4, min_attempts=4), seed=0)
    for _ in range(4):
        cur.record(tid, "full", True)
    for _ in range(4):
        cur.record(tid, ladder(operations()[tid].stages)[0], True)
    assert cur.current_stage(tid) == "full"


def test_state_round_trips_through_json():
    tid = _staged_op()
    a = Curriculum(CurriculumConfig(window=4, min_attempts=2), seed=5)
    for _ in range(3):
        a.draw()
        a.record(tid, ladder(operations()[tid].stages)[0], True)
    state = json.loads(json.dumps(a.state_dict()))
    b = Curriculum(CurriculumConfig(window=4, min_attempts=2), seed=99)
    b.load_state_dict(state)
    assert b.current_stage(tid) == a.current_stage(tid)
    assert [b.draw() for _ in range(5)] == [a.draw() for _ in range(5)]


def test_bad_configs_are_refused():
    with pytest.raises(TaskError, match="unknown families"):
        CurriculumConfig(family_weights={"attention": 1.0})
    with pytest.raises(TaskError, match="floor_full"):
        CurriculumConfig(floor_full=1.5)
    with pytest.raises(TaskError, match="unknown task ids"):
        Curriculum(CurriculumConfig(exclude=("nope-v1",)))
    with pytest.raises(TaskError, match="no family left"):
        Curriculum(CurriculumConfig(family_weights={f: 0.0 for f in FAMILIES}))


def test_excluded_ids_are_never_drawn():
    cur = Curriculum(CurriculumConfig(exclude=("relu-v1",), family_weights={"elementwise": 1.0}), seed=3)
    assert all(cur.draw().task_id != "relu-v1" for _ in range(300))
