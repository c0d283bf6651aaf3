"""Elementwise family: ReLU, GELU, LeakyReLU, sigmoid, tanh, SiLU on a (batch_size, dim) tensor.

One reference and one solution file shared by all operations (they differ in one expression, filled
through slots). The wrong answers are the solution with the expression a model gets subtly wrong:
a branch dropped, an approximation where the reference is exact.
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


def _op(name: str, title: str, formula: str, torch_expr: str, triton_expr: str, wrong_expr: str,
        param: tuple[str, str] | None = None) -> Operation:
    if param is None:
        init = {"init_args": "self", "init_body": "", "init_values": "", "kernel_args": "", "launch_args": ""}
    else:
        pname, pvalue = param
        init = {"init_args": f"self, {pname}: float = {pvalue}", "init_body": f"        self.{pname} = {pname}\n",
                "init_values": pvalue, "kernel_args": f"{pname}, ", "launch_args": f"self.{pname}, "}
    return Operation(
        name=name, family="elementwise", folder=HERE, description=f"y = {formula}, elementwise",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes,
        slots={"title": title, "formula": formula, "torch_expr": torch_expr, "triton_expr": triton_expr,
               "kernel": f"{name}_kernel", **init},
        wrong_slots={"triton_expr": wrong_expr})


OPERATIONS = [
    _op("relu", "ReLU", "max(x, 0)", "torch.relu(x)", "tl.maximum(x, 0.0)",
        wrong_expr="x"),  # right for every non-negative input, which is all KernelBench's rand() draws
    _op("gelu", "GELU", "x * Phi(x) (exact, erf form)", "torch.nn.functional.gelu(x)",
        "0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))",
        # the tanh approximation: off by up to ~5e-4, invisible to a loose tolerance
        wrong_expr="0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)) - 1.0))"),
    _op("leaky_relu", "LeakyReLU", "x if x > 0 else negative_slope * x",
        "torch.nn.functional.leaky_relu(x, self.negative_slope)",
        "tl.where(x > 0, x, x * negative_slope)",
        wrong_expr="tl.where(x > 0, x, x * 0.01)",  # the default slope, not the module's
        param=("negative_slope", "0.05")),
    _op("sigmoid", "sigmoid", "1 / (1 + exp(-x))", "torch.sigmoid(x)", "1.0 / (1.0 + tl.exp(-x))",
        wrong_expr="tl.minimum(tl.maximum(0.25 * x + 0.5, 0.0), 1.0)"),  # hard sigmoid
    _op("tanh", "tanh", "tanh(x)", "torch.tanh(x)",
        # tanh(x) = sign(x) * (1 - e) / (1 + e), e = exp(-2|x|): no overflow, no cancellation for large |x|
        "tl.where(x >= 0, 1.0, -1.0) * (1.0 - tl.exp(-2.0 * tl.abs(x))) / (1.0 + tl.exp(-2.0 * tl.abs(x)))",
        wrong_expr="x - x * x * x / 3.0"),  # a truncated series: right only near zero
    _op("silu", "SiLU", "x * sigmoid(x)", "torch.nn.functional.silu(x)", "x / (1.0 + tl.exp(-x))",
        wrong_expr="x / (1.0 + tl.exp(x))"),  # the sign of the exponent flipped
]
