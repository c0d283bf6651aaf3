"""Reduction family: row sum, row mean, row max and column sum of a (batch_size, dim) tensor.

The reduced axis is dropped (keepdim=False), as in KernelBench's level-1 mean and max reductions.
All four operations share one reference and one strided solution (rows vs columns is a stride, the
operation is an init value, a fold and a finish), filled through slots.

Reduced lengths are capped where fp32 summation order matters: a sum of zero-mean inputs has |ref|
near 0 for some outputs, where the tolerance is 1e-4 absolute, while its rounding error grows with
sigma * sqrt(n) (tree) or sigma * n (serial). At the worst hidden case (randn * 4, x3), measured over
16M-64M elements: two tree orders differ by 0.5 of the tolerance at n = 256 and 1.3 at 1024; a serial
sum (the natural column kernel, and close to torch's column sum on CUDA) is off by 0.3 at 64 and 1.3
at 256. Hence row sums <= 256 and column sums <= 64 values. Means (their tolerance scales with
mean|ref|: 0.006 of it at 8191 values) and maxima (exact) take rows up to 8192.
Does not cover multi-axis or keepdim reductions, nor argmax.
"""

from __future__ import annotations

import random
from pathlib import Path

from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, rows_cols

HERE = Path(__file__).parent
SUM_MAX_LEN = 256  # longest fp32 row sum that stays well inside the tolerance (see above)
COL_SUM_MAX_LEN = 64  # a column sum is naturally a serial loop down the rows: keep it short
LONG_MAX_LEN = 8192  # mean and max: order-insensitive within the tolerance


def _row_shapes(max_len: int):
    def shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
        batch_size, dim = rows_cols(rng, budget, 3, max_len)
        return {"batch_size": batch_size, "dim": dim}
    return shapes


def _col_shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    dim, batch_size = rows_cols(rng, budget, 3, COL_SUM_MAX_LEN)
    return {"batch_size": batch_size, "dim": dim}


def _cap(axis_name: str, max_len: int):
    def check(shapes: dict[str, int]) -> str | None:
        if shapes[axis_name] > max_len:
            return (f"{axis_name}={shapes[axis_name]} is reduced; beyond {max_len} values fp32 summation "
                    "order alone moves results past the 1e-4 tolerance")
        return None
    return check


# Slots common to row and column sums; the wrong answer drops the last reduced element (an
# off-by-one in the tail mask), which a loose tolerance on a long sum would miss.
_SUM = {"init": "0.0", "combine": "acc + x", "finish": "tl.sum(acc, axis=1)", "red_mask": "offs_r < n_red"}
_DROP_LAST = {"red_mask": "offs_r < n_red - 1"}


def _op(name: str, title: str, formula: str, dim: int, torch_expr: str, slots: dict[str, str],
        wrong_slots: dict[str, str], shapes, check=None) -> Operation:
    return Operation(
        name=name, family="reduction", folder=HERE, description=f"{formula} of a 2-D tensor (keepdim=False)",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes, check=check,
        slots={"title": title, "formula": formula, "axis": str(dim), "torch_expr": torch_expr,
               "kernel": f"{name}_kernel", **slots},
        wrong_slots=wrong_slots)


OPERATIONS = [
    _op("row_sum", "Row sum", "sum over dim 1", 1, "torch.sum(x, dim=self.reduce_dim)", _SUM, _DROP_LAST,
        _row_shapes(SUM_MAX_LEN), _cap("dim", SUM_MAX_LEN)),
    _op("row_mean", "Row mean", "mean over dim 1", 1, "torch.mean(x, dim=self.reduce_dim)",
        {**_SUM, "finish": "tl.sum(acc, axis=1) / n_red"},
        # x.shape[0] where x.shape[1] was meant: divides by the number of outputs
        {"finish": "tl.sum(acc, axis=1) / n_out"},
        _row_shapes(LONG_MAX_LEN), _cap("dim", LONG_MAX_LEN)),
    _op("row_max", "Row max", "max over dim 1", 1, "torch.amax(x, dim=self.reduce_dim)",
        {"init": 'float("-inf")', "combine": "tl.maximum(acc, x)", "finish": "tl.max(acc, axis=1)",
         "red_mask": "offs_r < n_red"},
        # the absmax a quantisation kernel wants: identical on KernelBench's rand() inputs in [0, 1)
        {"init": "0.0", "combine": "tl.maximum(acc, tl.abs(x))"},
        _row_shapes(LONG_MAX_LEN)),
    _op("col_sum", "Column sum", "sum over dim 0", 0, "torch.sum(x, dim=self.reduce_dim)", _SUM, _DROP_LAST,
        _col_shapes, _cap("batch_size", COL_SUM_MAX_LEN)),
]
