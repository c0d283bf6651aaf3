"""Fusion family: gated activations and add + ReLU over two (batch_size, dim) tensors.

SiLU gating (silu(a) * b), exact-GELU gating (gelu(a) * b) and relu(a + b): what eager PyTorch runs
as two kernels with an intermediate in memory, written as one pass. One reference and one solution
file shared by all operations (they differ in one expression, filled through slots). The wrong
answers are that expression as models get it wrong: a GLU gate for a SiLU gate, the sigmoid
approximation of GELU, ReLU distributed over the sum.
Does not cover broadcasting inputs or gates split out of one tensor (chunk); fusion behind a GEMM
is the gemm_epilogue family.
"""

from __future__ import annotations

import random
from pathlib import Path

from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, rows_cols

HERE = Path(__file__).parent


def shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    batch_size, dim = rows_cols(rng, budget, 16, 1 << 18)
    return {"batch_size": batch_size, "dim": dim}


def _op(name: str, title: str, formula: str, torch_expr: str, triton_expr: str, wrong_expr: str) -> Operation:
    return Operation(
        name=name, family="fusion", folder=HERE, description=f"out = {formula}, elementwise over two inputs",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes,
        slots={"title": title, "formula": formula, "torch_expr": torch_expr, "triton_expr": triton_expr,
               "kernel": f"{name}_kernel"},
        wrong_slots={"triton_expr": wrong_expr})


OPERATIONS = [
    _op("silu_gate", "SiLU gating", "silu(a) * b", "torch.nn.functional.silu(a) * b",
        "a / (1.0 + tl.exp(-a)) * b",
        wrong_expr="tl.sigmoid(a) * b"),  # GLU's sigmoid gate where SwiGLU's SiLU belongs: the a factor lost
    _op("gelu_gate", "GELU gating", "gelu(a) * b (exact, erf form)", "torch.nn.functional.gelu(a) * b",
        "0.5 * a * (1.0 + tl.erf(a * 0.7071067811865476)) * b",
        # "quick GELU", a * sigmoid(1.702 a): off by up to ~0.02, where the reference is exact
        wrong_expr="a * tl.sigmoid(1.702 * a) * b"),
    _op("add_relu", "add + ReLU", "relu(a + b)", "torch.relu(a + b)", "tl.maximum(a + b, 0.0)",
        # ReLU distributed over the sum: right whenever a and b share a sign, so |x| inputs pass
        wrong_expr="tl.maximum(a, 0.0) + tl.maximum(b, 0.0)"),
]
