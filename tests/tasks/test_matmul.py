"""matmul's shape rule, which gemm_epilogue and fused_hybrid's linear operations share: the output
fills the size's budget, K stays in the range the 1e-4 tolerance allows, K is odd (the tail tile is
always partial) and K <= N (matmul_t's wrong answer stays in bounds). No verification: cheap."""

from __future__ import annotations

import pytest

from kgym.tasks import TaskError, make
from kgym.tasks.families.matmul import reduction_range
from kgym.tasks.shapes import budget_for


@pytest.mark.parametrize("size", ["tiny", "small", "full"])
def test_gemm_shapes_fill_the_budget(size):
    budget = budget_for(size, "full")
    k_lo, k_hi = reduction_range(budget)
    for seed in range(40):
        s = make("matmul_t-v1", seed, size=size).spec.shapes
        assert budget.lo <= s["M"] * s["N"] <= budget.hi
        assert k_lo - 1 <= s["K"] <= k_hi and s["K"] % 2 == 1 and s["K"] <= s["N"]
    assert k_hi <= 512


def test_scaffold_cuts_the_k_loop():
    task = make("matmul-v1", 3, size="tiny", stage="scaffold")
    assert "acc = tl.dot(" in task.solution and "acc = tl.dot(" not in task.scaffold
    assert "offs_k = tl.arange(0, BLOCK_K)" in task.scaffold  # tile offsets are given


def test_int32_overflow_is_refused():
    with pytest.raises(TaskError, match="int32"):
        make("matmul-v1", 1, shapes={"M": 1 << 20, "N": 4096, "K": 64})
