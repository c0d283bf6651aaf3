"""make(), the registry and TaskSpec: ids, seeds, sizes, shapes, determinism, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kgym.tasks import FAMILIES, SIZES, TaskError, TaskSpec, make, make_from_spec, operations, task_ids
from kgym.tasks.shapes import BUDGETS, dim, is_prime


def test_fourteen_families_registered_with_versioned_ids():
    assert len(FAMILIES) == 14
    for tid, op in operations().items():
        assert tid == f"{op.name}-v{op.version}"
    assert "softmax-v1" in task_ids()


@pytest.mark.parametrize("tid", sorted(operations()))
def test_shapes_fit_the_budget_at_every_size(tid):
    op = operations()[tid]
    for size in SIZES:
        for stage in op.stages:
            task = make(tid, 3, size=size, stage=stage)
            assert task.spec.size == size and task.spec.stage == stage
            if tid != "kernelbook-v1":  # KernelBook keeps its row's shape and scales the batch
                assert set(task.spec.shapes) and all(v >= 1 for v in task.spec.shapes.values())


def test_same_seed_same_bytes_in_a_fresh_process():
    # Byte-identical across processes (no dependence on hash randomisation or import order).
    code = ("import json; from kgym.tasks import make; t = make('gelu-v1', 12345, size='full'); "
            "print(json.dumps([t.reference, t.solution, t.prompt()]))")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(h), "PATH": "/usr/bin:/bin"}).stdout for h in (1, 2)]
    assert outs[0] == outs[1]
    t = make("gelu-v1", 12345, size="full")
    assert json.loads(outs[0]) == [t.reference, t.solution, t.prompt()]


def test_seeds_draw_different_shapes():
    shapes = {json.dumps(make("relu-v1", s, size="full").spec.shapes) for s in range(20)}
    assert len(shapes) > 10


def test_full_size_spans_one_to_thirty_two_million_elements():
    counts = []
    for s in range(30):
        sh = make("relu-v1", s, size="full").spec.shapes
        counts.append(sh["batch_size"] * sh["dim"])
    assert all(BUDGETS["full"].lo <= c <= BUDGETS["full"].hi for c in counts)
    assert min(counts) < 4 << 20 and max(counts) > 8 << 20


def test_awkward_dimensions_are_drawn():
    import random

    rng = random.Random(0)
    values = [dim(rng, 16, 1 << 16) for _ in range(400)]
    assert any(is_prime(v) and v > 2 for v in values)
    assert any(v & (v - 1) == 0 for v in (x + 1 for x in values))  # 2^k - 1
    assert any(v & (v - 1) == 0 for v in (x - 1 for x in values))  # 2^k + 1


def test_spec_round_trips_and_rebuilds():
    task = make("layernorm-v1" if "layernorm-v1" in operations() else "relu-v1", 9, size="tiny")
    spec = TaskSpec.from_dict(json.loads(task.spec.to_json()))
    assert spec == task.spec
    assert make_from_spec(spec).reference == task.reference
    assert spec.key == task.spec.key and len(spec.key) == 16


def test_shape_overrides_are_checked():
    t = make("relu-v1", 0, size="tiny", shapes={"batch_size": 3, "dim": 7})
    assert "batch_size = 3" in t.reference and "dim = 7" in t.reference
    with pytest.raises(TaskError, match="must name exactly"):
        make("relu-v1", 0, shapes={"batch_size": 3})
    with pytest.raises(TaskError, match="integer in"):
        make("relu-v1", 0, shapes={"batch_size": 0, "dim": 7})
    with pytest.raises(TaskError, match="integer in"):
        make("relu-v1", 0, shapes={"batch_size": 2.5, "dim": 7})


@pytest.mark.parametrize("kwargs,match", [
    ({"task_id": "nope-v1", "seed": 0}, "unknown task id"),
    ({"task_id": "softmax", "seed": 0}, "did you mean 'softmax-v1'"),
    ({"task_id": "relu-v1", "seed": -1}, "seed must be in"),
    ({"task_id": "relu-v1", "seed": 1 << 63}, "seed must be in"),
    ({"task_id": "relu-v1", "seed": "7"}, "seed must be an integer"),
    ({"task_id": "relu-v1", "seed": True}, "seed must be an integer"),
    ({"task_id": "relu-v1", "seed": 0, "size": "huge"}, "unknown size"),
    ({"task_id": "relu-v1", "seed": 0, "stage": "warmup"}, "unknown stage"),
    ({"task_id": "relu-v1", "seed": 0, "stage": "scaffold"}, "has no 'scaffold' stage"),
])
def test_bad_requests_name_the_problem(kwargs, match):
    with pytest.raises(TaskError, match=match):
        make(**kwargs)


def test_scaffold_cuts_the_inner_math():
    staged = [(tid, s) for tid, op in operations().items() for s in op.stages if s in ("scaffold", "epilogue")]
    if not staged:
        pytest.skip("no staged operation registered yet")
    for tid, stage in staged:
        t = make(tid, 1, size="tiny", stage=stage)
        assert "TODO: write" in t.scaffold and "kgym-scaffold" not in t.scaffold
        assert len(t.scaffold) < len(t.solution)
        assert t.scaffold in t.prompt() or t.scaffold.rstrip() in t.prompt()
        assert (stage == "epilogue") <= t.hybrid
