"""conv2d family and the module family's conv modules, without the verifier: the larger activation
lies in the element budget at every size, the reduction stays short enough for fp32, impossible
shapes are refused. (check_task runs in test_conformance.py.)"""

from __future__ import annotations

import pytest

from kgym.tasks import make
from kgym.tasks.shapes import budget_for
from kgym.tasks.spec import TaskError

# task id -> (kernel, stride, padding) of its reference
CONVS = {"conv2d_3x3-v1": (3, 1, 1), "conv2d_strided-v1": (3, 2, 1), "conv2d_pointwise-v1": (1, 1, 0),
         "conv2d_module-v1": (3, 1, 0), "grouped_conv2d-v1": (3, 1, 1)}


@pytest.mark.parametrize("task_id", list(CONVS))
@pytest.mark.parametrize("size", ["tiny", "small", "full"])
def test_shapes_in_budget(task_id, size):
    k, stride, pad = CONVS[task_id]
    for seed in range(60):
        for stage in ("full", "small"):
            s = make(task_id, seed, size=size, stage=stage).spec.shapes
            oh = (s["height"] + 2 * pad - k) // stride + 1
            ow = (s["width"] + 2 * pad - k) // stride + 1
            out = s["batch_size"] * s["out_channels"] * oh * ow
            inp = s["batch_size"] * s["in_channels"] * s["height"] * s["width"]
            b = budget_for(size, stage)
            assert b.lo <= max(out, inp) <= b.hi, s
            g = s.get("groups", 1)
            assert s["in_channels"] % g == 0 and s["out_channels"] % g == 0, s
            assert s["in_channels"] // g >= 2 and s["in_channels"] // g * k * k <= 1024, s


def test_impossible_shapes_refused():
    base = {"batch_size": 1, "in_channels": 4, "out_channels": 8, "height": 9, "width": 9}
    with pytest.raises(TaskError, match="smaller than the 3x3 kernel"):
        make("conv2d_module-v1", 1, shapes={**base, "width": 2})
    with pytest.raises(TaskError, match="divide by groups"):
        make("grouped_conv2d-v1", 1, shapes={**base, "groups": 3})
    make("grouped_conv2d-v1", 1, shapes={**base, "groups": 4})  # a possible set passes
