"""module family's linear module, without the verifier: the larger of input and output lies in the
element budget, the reduction stays short enough for fp32, and in_features != out_features so a
weight read in the wrong layout is never right by accident. (The conv modules are covered in
test_conv2d.py, check_task in test_conformance.py.)"""

from __future__ import annotations

import pytest

from kgym.tasks import make
from kgym.tasks.shapes import budget_for


@pytest.mark.parametrize("size", ["tiny", "small", "full"])
def test_linear_shapes_in_budget(size):
    for seed in range(200):
        for stage in ("full", "small"):
            s = make("linear_module-v1", seed, size=size, stage=stage).spec.shapes
            b = budget_for(size, stage)
            assert b.lo <= s["batch_size"] * max(s["in_features"], s["out_features"]) <= b.hi, s
            assert s["in_features"] <= 1024 and s["in_features"] != s["out_features"], s
