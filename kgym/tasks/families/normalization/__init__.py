"""Normalization family: RMSNorm and LayerNorm over the last dimension of a (batch_size, dim)
tensor, each with learnable affine parameters (re-drawn from the seed so that they matter).

Both share one reference and one solution: the statistics differ in a centre and a variance
expression, LayerNorm adds a bias. The wrong answers are the slips models make: eps added to the
standard deviation instead of the variance (only the x0.01 hidden case, where var ~ eps, shows it
at 1e-4), and RMSNorm written as LayerNorm without the bias (centred; the |x| hidden case, whose
rows have a large mean, shows it).
Does not cover normalisation over several trailing dimensions, GroupNorm or BatchNorm.
"""

from __future__ import annotations

import random
from pathlib import Path

from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, rows_cols

HERE = Path(__file__).parent
DIM_HI = 16384  # widest row the family draws (rows wider than a 4096-wide tile take several)


def shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    batch_size, dim = rows_cols(rng, budget, 16, DIM_HI)
    return {"batch_size": batch_size, "dim": dim}


_RSTD = "1.0 / tl.sqrt(var + eps)"

OPERATIONS = [
    Operation(
        name="rmsnorm", family="normalization", folder=HERE,
        description="RMSNorm over the last dimension: x / sqrt(mean(x^2) + eps) * weight",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes,
        slots={"title": "RMSNorm", "params": "weight", "formula": "y = x / sqrt(mean(x^2) + eps) * weight",
               "module": "nn.RMSNorm", "eps": "1e-06", "bias_default": "", "init_bias": "",
               "kernel": "rmsnorm_kernel", "flops": "4",
               "pivot": "tl.zeros((BLOCK_O,), dtype=tl.float32)", "center": "pivot",
               "rstd": "1.0 / tl.sqrt(mean_q + eps)",
               "add_bias": "", "bias_arg": "self.norm.weight"},  # no bias: the weight stands in, unread
        # LayerNorm's centred variance where RMSNorm uses the raw mean square
        wrong_slots={"rstd": "1.0 / tl.sqrt(mean_q - mean_d * mean_d + eps)"}),
    Operation(
        name="layernorm", family="normalization", folder=HERE,
        description="LayerNorm over the last dimension: (x - mean) / sqrt(var + eps) * weight + bias",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes,
        slots={"title": "LayerNorm", "params": "weight and bias",
               "formula": "y = (x - mean) / sqrt(var + eps) * weight + bias (biased variance)",
               "module": "nn.LayerNorm", "eps": "1e-05", "bias_default": ", bias 0",
               "init_bias": "        nn.init.normal_(self.norm.bias, mean=0.0, std=0.5)\n",
               "kernel": "layernorm_kernel", "flops": "7",
               "pivot": "tl.load(x_ptr + rows * n_cols, mask=row_mask, other=0.0)",
               "center": "pivot + mean_d", "rstd": "1.0 / tl.sqrt(mean_q - mean_d * mean_d + eps)",
               "add_bias": " + tl.load(b_ptr + cols, mask=col_mask, other=0.0)[None, :]",
               "bias_arg": "self.norm.bias"},
        # eps added to the standard deviation instead of the variance
        wrong_slots={"rstd": "1.0 / (tl.sqrt(mean_q - mean_d * mean_d) + eps)"}),
]
