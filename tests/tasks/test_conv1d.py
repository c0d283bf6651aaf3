"""conv1d family, without the verifier: shapes stay in the element budget at every size, kernels are
odd, impossible shapes are refused. (check_task runs in test_conformance.py.)"""

from __future__ import annotations

import pytest

from kgym.tasks import make, task_ids
from kgym.tasks.shapes import budget_for
from kgym.tasks.spec import TaskError


@pytest.mark.parametrize("task_id", task_ids("conv1d"))
@pytest.mark.parametrize("size", ["tiny", "small", "full"])
def test_shapes_in_budget(task_id, size):
    for seed in range(100):
        for stage in ("full", "small"):
            s = make(task_id, seed, size=size, stage=stage).spec.shapes
            b = budget_for(size, stage)
            assert b.lo <= s["batch_size"] * s["channels"] * s["length"] <= b.hi, s
            assert s["kernel_size"] % 2 == 1, s


def test_even_kernel_refused():
    with pytest.raises(TaskError, match="even"):
        make("depthwise_conv1d_relu-v1", 1, shapes={"batch_size": 1, "channels": 2, "length": 64, "kernel_size": 4})
