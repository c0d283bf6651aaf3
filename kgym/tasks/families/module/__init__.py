"""module family: a whole nn.Module to reproduce, parameters included: an nn.Linear, a 3x3 nn.Conv2d
without padding, and a grouped 3x3 nn.Conv2d. Stages: full, small, scaffold.

The linear module has its own reference and GEMM solution here; the two conv modules reuse the conv2d
family's reference and implicit-GEMM solution (`conv_operation`: the module's kernel size, stride,
padding and groups are constants of the shared reference). Wrong answers: the nn.Linear weight used
untransposed (x @ W), the conv bias forgotten, the groups' input channels interleaved instead of
taken as contiguous blocks. Does not cover modules with more than one layer (fused_hybrid, kernelbook).
"""

from __future__ import annotations

import random
from pathlib import Path

from kgym.tasks.families.conv2d import TINY, conv_operation
from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, dim

HERE = Path(__file__).parent


def linear_shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    """The larger of input and output (batch_size x features) lies in the budget; in_features, the reduction length,
    stays <= 1024 so fp32 summation order cannot reach the tolerance. in_features != out_features, so
    a weight read in the wrong layout is never right by accident."""
    tiny = budget.hi <= TINY
    in_features = dim(rng, 3, 64) if tiny else dim(rng, 16, 1024)
    out_features = dim(rng, 2, 64) if tiny else dim(rng, 16, 4096)
    if out_features == in_features:
        out_features += 1
    widest = max(in_features, out_features)  # the larger of input and output lies in the budget
    batch_size = dim(rng, max(1, -(-budget.lo // widest)), max(1, budget.hi // widest))
    return {"batch_size": batch_size, "in_features": in_features, "out_features": out_features}


OPERATIONS = [
    Operation(
        name="linear_module", family="module", folder=HERE, description="y = x @ W^T + b, an nn.Linear module",
        reference="linear_reference.py", solution="linear_solution.py", wrong="linear_solution.py",
        shapes=linear_shapes, stages=("full", "small", "scaffold"),
        slots={"w_offset": "cols[None, :] * stride_wn + ks[:, None] * stride_wk"},
        # x @ W: the (out, in) weight read as if it were (in, out), the nn.Linear layout mix-up
        wrong_slots={"w_offset": "ks[:, None] * N + cols[None, :]"}),
    conv_operation("conv2d_module", "module", "3x3 convolution module without padding", 3, 1, 0,
                   wrong={"bias": "pass  # the bias is forgotten"}),
    conv_operation("grouped_conv2d", "module", "grouped 3x3 convolution module", 3, 1, 1, groups=8,
                   # group g's input channels taken as every G-th channel instead of a contiguous block
                   wrong={"x_channel": "ci * G + g"}),
]
