"""fused_hybrid family: KernelBench level-2 style modules where one library call is allowed at every
stage (answer mode hybrid), with small and epilogue stages.

Operations: conv + ReLU + bias (the convolution with and without its own bias, then an extra
(C, 1, 1) bias), linear + GroupNorm + ReLU, linear + max over features + GELU. Each answer keeps
the convolution or the linear layer as its one cuDNN/cuBLAS call and fuses the rest into one Triton
kernel; the epilogue stage shows that answer with the tail cut out. Each operation has its own file
pair (the tails share nothing); the two conv operations share theirs through slots.
Wrong answers: the conv's bias added before the ReLU, GroupNorm with the unbiased variance, the
linear bias dropped before the max (the GEMM written as torch.mm and the bias forgotten).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from kgym.tasks.families.matmul import gemm_dims, int32_indexable, reduction_range
from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, dim

HERE = Path(__file__).parent
STAGES = ("full", "small", "epilogue")
KERNEL_SIZE = 3  # the conv references' fixed kernel_size


def conv_shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    """The conv output (batch, out_channels, height - 2, width - 2) fills the budget."""
    root = math.isqrt(budget.hi)
    c_out = dim(rng, 4, min(64, max(4, root // 4)))
    c_in = dim(rng, 3, min(32, max(3, root // 16)))
    w_out = dim(rng, 4, min(256, math.isqrt(budget.hi // c_out)))
    lo, hi = -(-budget.lo // (c_out * w_out)), budget.hi // (c_out * w_out)  # batch * h_out
    batch = dim(rng, 1, 8)
    if -(-lo // batch) > hi // batch:
        batch = 1
    h_out = dim(rng, max(1, -(-lo // batch)), max(1, hi // batch))
    return {"batch_size": batch, "in_channels": c_in, "out_channels": c_out,
            "height": h_out + KERNEL_SIZE - 1, "width": w_out + KERNEL_SIZE - 1}


def conv_check(s: dict[str, int]) -> str | None:
    if min(s["height"], s["width"]) < KERNEL_SIZE:
        return f"height and width must be at least kernel_size = {KERNEL_SIZE}"
    h_out, w_out = s["height"] - KERNEL_SIZE + 1, s["width"] - KERNEL_SIZE + 1
    return int32_indexable(x=s["batch_size"] * s["in_channels"] * s["height"] * s["width"],
                           y=s["batch_size"] * s["out_channels"] * h_out * w_out)


def linear_shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    """The linear output (batch_size, out_features) fills the budget, as matmul's C does."""
    M, N, K = gemm_dims(rng, budget)
    return {"batch_size": M, "in_features": K, "out_features": N}


def linear_check(s: dict[str, int]) -> str | None:
    M, K, N = s["batch_size"], s["in_features"], s["out_features"]
    return int32_indexable(x=M * K, weight=N * K, y=M * N)


def groupnorm_shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    """out_features = num_groups * an awkward group size (4..64 channels), batch_size from the budget."""
    k_lo, k_hi = reduction_range(budget)
    group = dim(rng, 4, 64)
    groups = rng.choice([g for g in (2, 4, 8, 16, 32) if g * group <= budget.hi // 4] or [1])
    N = groups * group
    M = dim(rng, max(1, -(-budget.lo // N)), max(1, budget.hi // N))
    return {"batch_size": M, "in_features": dim(rng, k_lo, k_hi), "out_features": N, "num_groups": groups}


def groupnorm_check(s: dict[str, int]) -> str | None:
    if s["out_features"] % s["num_groups"]:
        return "out_features must be a multiple of num_groups"
    return linear_check(s)


def _conv(name: str, conv_bias: bool) -> Operation:
    kind = "with bias" if conv_bias else "without bias"
    return Operation(
        name=name, family="fused_hybrid", folder=HERE, hybrid=True, stages=STAGES,
        description=f"y = relu(conv2d(x) {kind}, 3x3) + bias[c]",
        reference="conv_reference.py", solution="conv_solution.py", epilogue="conv_solution.py",
        wrong="conv_solution.py", shapes=conv_shapes, check=conv_check,
        slots={"conv_kind": kind, "conv_bias": str(conv_bias), "tail": "tl.maximum(y, 0.0) + b[:, None]"},
        wrong_slots={"tail": "tl.maximum(y + b[:, None], 0.0)"})  # the bias added before the ReLU


OPERATIONS = [
    _conv("conv_relu_bias", conv_bias=True),
    _conv("conv_nobias_relu_bias", conv_bias=False),
    Operation(
        name="linear_groupnorm_relu", family="fused_hybrid", folder=HERE, hybrid=True, stages=STAGES,
        description="y = relu(group_norm(x @ W^T + b)), GroupNorm over out_features in num_groups groups",
        reference="groupnorm_reference.py", solution="groupnorm_solution.py",
        epilogue="groupnorm_solution.py", wrong="groupnorm_solution.py",
        shapes=groupnorm_shapes, check=groupnorm_check,
        slots={"var_divisor": "GS"},
        wrong_slots={"var_divisor": "(GS - 1)"}),  # the unbiased variance (torch.var's default)
    Operation(
        name="linear_max_gelu", family="fused_hybrid", folder=HERE, hybrid=True, stages=STAGES,
        description="y = gelu(max over dim 1 of (x @ W^T + b)), keepdim: shape (batch_size, 1)",
        reference="max_gelu_reference.py", solution="max_gelu_solution.py", epilogue="max_gelu_solution.py",
        wrong="max_gelu_solution.py", shapes=linear_shapes, check=linear_check,
        slots={"gemm": "F.linear(x, self.linear.weight, self.linear.bias)"},
        wrong_slots={"gemm": "torch.mm(x, self.linear.weight.t())"}),  # the linear bias forgotten
]
