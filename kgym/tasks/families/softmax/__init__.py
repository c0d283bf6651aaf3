"""Softmax family: softmax and log-softmax over dim=1 of a (batch_size, dim) tensor.

One reference and one solution file shared by both operations (they differ in the output
expression, filled through slots). Rows up to 4096 wide are one register tile; longer rows (up to
32768 at full size) take the solution's online two-pass path. The wrong answers are the solution
with the max shift dropped from one side of the formula: the slip of a model that subtracts the row
max for stability and forgets to put it back.
Does not cover softmax over other axes or masked/causal softmax.
"""

from __future__ import annotations

import random
from pathlib import Path

from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, rows_cols

HERE = Path(__file__).parent


def shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    batch_size, dim = rows_cols(rng, budget, 16, 1 << 15)
    return {"batch_size": batch_size, "dim": dim}


def _op(name: str, title: str, formula: str, torch_expr: str, out_expr: str, wrong_expr: str) -> Operation:
    return Operation(
        name=name, family="softmax", folder=HERE, description=f"y = {formula} over dim=1 of a 2-D tensor",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes,
        slots={"title": title, "torch_expr": torch_expr, "out_expr": out_expr, "kernel": f"{name}_kernel"},
        wrong_slots={"out_expr": wrong_expr})


OPERATIONS = [
    _op("softmax", "Softmax", "exp(x) / sum(exp(x))", "torch.softmax(x, dim=1)",
        "tl.exp(x - row_max) / row_sum",
        # the numerator unshifted while the sum was shifted: off by exp(row_max) on every element
        wrong_expr="tl.exp(x) / row_sum"),
    _op("log_softmax", "LogSoftmax", "x - log(sum(exp(x)))", "torch.log_softmax(x, dim=1)",
        "x - row_max - tl.log(row_sum)",
        # logsumexp without adding the max back: off by row_max on every element
        wrong_expr="x - tl.log(row_sum)"),
]
