"""conv1d family: a depthwise Conv1d (groups=channels, odd kernel, 'same' padding) with bias, then ReLU
or a residual add, on a (batch_size, channels, length) tensor. Stages: full, small, scaffold.

One reference and one solution file shared by both operations through slots (they differ in the
epilogue). The wrong answers are the solution with the tap indexing a model gets subtly wrong: the
filter flipped (true convolution where torch computes cross-correlation), the padding off by one.
Does not cover dense or strided 1-D convolutions.
"""

from __future__ import annotations

import random
from pathlib import Path

from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, dim

HERE = Path(__file__).parent
TINY = 4096  # budgets at or below this run on Triton's interpreter: few taps


def shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    if budget.hi <= TINY:
        # Each tap is one interpreted op per program: keep kernels short on the CPU.
        batch_size, channels = dim(rng, 1, 4), dim(rng, 2, 16)
        kernel_size = rng.choice((3, 5, 7))
    else:
        batch_size, channels = dim(rng, 1, 16), dim(rng, 16, 768)
        kernel_size = rng.choice((3, 5, 7, 9, 15, 31))
    rows = batch_size * channels
    length = dim(rng, max(1, -(-budget.lo // rows)), max(1, budget.hi // rows))
    return {"batch_size": batch_size, "channels": channels, "length": length, "kernel_size": kernel_size}


def check(s: dict[str, int]) -> str | None:
    if s["kernel_size"] % 2 == 0:
        return f"kernel_size={s['kernel_size']} is even: padding kernel_size // 2 keeps the length only for odd kernels"
    return None


def _op(name: str, title: str, formula: str, torch_expr: str, triton_epilogue: str,
        wrong: dict[str, str]) -> Operation:
    return Operation(
        name=name, family="conv1d", folder=HERE,
        description=f"y = {formula}, depthwise conv1d with 'same' padding",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes, check=check,
        stages=("full", "small", "scaffold"),
        slots={"title": title, "formula": formula, "torch_expr": torch_expr, "triton_epilogue": triton_epilogue,
               "tap_pos": "pos0 + (k - PAD)", "w_tap": "k"},
        wrong_slots=wrong)


OPERATIONS = [
    _op("depthwise_conv1d_relu", "ReLU", "relu(conv1d(x) + b)", "torch.relu(self.conv(x))",
        "tl.maximum(acc, 0.0)",
        wrong={"w_tap": "(K - 1 - k)"}),  # the filter flipped: convolution, not torch's cross-correlation
    _op("depthwise_conv1d_residual", "a residual add", "conv1d(x) + b + x", "self.conv(x) + x",
        "acc + tl.load(x_row + pos0, mask=mask, other=0.0)",
        wrong={"tap_pos": "pos0 + (k - (K + 1) // 2)"}),  # padding off by one: every output shifted a step
]
