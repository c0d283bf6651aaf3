"""conv2d family: nn.Conv2d with a bias on an NCHW tensor: 3x3 with padding 1, 3x3 with stride 2, and
pointwise (1x1). Stages: full, small, scaffold.

All operations share one reference and one implicit-GEMM solution (kernel size, stride, padding and
groups are read from the module, so the solution is shape-generic); they differ in the reference's
constants, filled through slots. Each wrong answer is the solution with one index a model gets subtly
wrong: the filter flipped (convolution where torch computes cross-correlation), the stride ignored on
the width axis, the 1x1 weight read transposed. `conv_operation` and `conv_shapes` are reused by the
module family (plain and grouped conv modules). Does not cover dilation or 'same' string padding.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from pathlib import Path

from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, dim
from kgym.tasks.spec import TaskError

HERE = Path(__file__).parent
TINY = 4096  # budgets at or below this run on Triton's interpreter: few channels, few programs
# The solution's index expressions; an operation's wrong answer overrides one of them.
SLOTS = {
    "iw0": "ow * SW - PW",
    "x_channel": "g * C_in_g + ci",
    "w_tap": "kh * KW + kw",
    "w_offset": "co[None, :] * KK + (ci * (KH * KW) + tap)[:, None]",
    "bias": "acc += tl.load(b_ptr + co, mask=n_mask, other=0.0)[None, :]",
}


def conv_shapes(rng: random.Random, budget: Budget, k: int, stride: int, pad: int, groups: int = 1
                ) -> dict[str, int]:
    """Shapes whose larger activation, output (batch, out_channels, OH, OW) or input, lies in the
    budget. The reduction length
    (in_channels/groups * k * k) stays <= ~1024 so fp32 summation order cannot reach the tolerance."""
    tiny = budget.hi <= TINY
    batch_size = dim(rng, 1, 2) if tiny else dim(rng, 1, 16)
    max_cin_g = (36 if tiny else 1024) // (k * k)
    # At least 2 channels per group and 2 outputs per axis, so that no wrong index (a transposed 1x1
    # weight, interleaved groups, a forgotten stride) happens to be right.
    if groups == 1:
        in_channels = dim(rng, 2, max(2, min(4 if tiny else 512, max_cin_g)))
        out_channels = dim(rng, 2, 8) if tiny else dim(rng, 8, 160)
    else:
        in_channels = groups * dim(rng, 2, max(2, min(3 if tiny else 64, max_cin_g)))
        out_channels = groups * (dim(rng, 2, 4) if tiny else dim(rng, 4, 48))
    # The output area, aimed at the budget by the larger of output and input (the input is about
    # stride^2 times the output's area), then drawn until the exact sizes fit.
    per_pos = batch_size * max(out_channels, in_channels * stride * stride)
    area_lo, area_hi = max(1, -(-budget.lo // per_pos)), max(1, budget.hi // per_pos)
    for _ in range(100):
        oh = dim(rng, max(2, math.isqrt(area_lo) // 2), max(2, min(area_hi // 2, 2 * math.isqrt(area_hi))))
        ow_lo, ow_hi = max(2, -(-area_lo // oh)), max(2, area_hi // oh)
        ow = dim(rng, min(ow_lo, ow_hi), ow_hi)
        # The input size that gives this output; a stride > 1 leaves up to stride-1 unused rows/columns.
        height = (oh - 1) * stride + k - 2 * pad + rng.randrange(stride)
        width = (ow - 1) * stride + k - 2 * pad + rng.randrange(stride)
        largest = batch_size * max(out_channels * oh * ow, in_channels * height * width)
        if budget.lo <= largest <= budget.hi:
            break
    else:
        raise TaskError(f"no conv2d shapes fit the element budget [{budget.lo}, {budget.hi}]")
    s = {"batch_size": batch_size, "in_channels": in_channels, "out_channels": out_channels,
         "height": height, "width": width}
    if groups != 1:
        s["groups"] = groups
    return s


def conv_check(k: int, stride: int, pad: int) -> Callable[[dict[str, int]], str | None]:
    def check(s: dict[str, int]) -> str | None:
        g = s.get("groups", 1)
        if s["in_channels"] % g or s["out_channels"] % g:
            return f"in_channels={s['in_channels']} and out_channels={s['out_channels']} must divide by groups={g}"
        for axis in ("height", "width"):
            if s[axis] + 2 * pad < k:
                return f"{axis}={s[axis]} plus padding 2*{pad} is smaller than the {k}x{k} kernel"
        return None
    return check


def conv_operation(name: str, family: str, title: str, k: int, stride: int, pad: int, wrong: dict[str, str],
                   groups: int | None = None) -> Operation:
    """A conv2d operation over this family's files. groups=None: no groups (1); an int: the groups are
    drawn as a shape, this being the largest."""
    if groups is None:
        shapes = lambda rng, budget: conv_shapes(rng, budget, k, stride, pad)  # noqa: E731
    else:
        shapes = lambda rng, budget: conv_shapes(rng, budget, k, stride, pad,  # noqa: E731
                                                 groups=rng.choice([g for g in (2, 3, 4, 8) if g <= groups]))
    return Operation(
        name=name, family=family, folder=HERE,
        description=f"y = conv2d(x) + bias, {title} (kernel {k}x{k}, stride {stride}, padding {pad})",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes,
        check=conv_check(k, stride, pad), stages=("full", "small", "scaffold"),
        slots={**SLOTS, "title": title, "kernel_size": str(k), "stride": str(stride), "padding": str(pad),
               "groups": "1"},
        wrong_slots=wrong)


OPERATIONS = [
    conv_operation("conv2d_3x3", "conv2d", "3x3 convolution keeping the size", 3, 1, 1,
                   # the filter flipped: true convolution, where torch computes cross-correlation
                   wrong={"w_tap": "(KH - 1 - kh) * KW + (KW - 1 - kw)"}),
    conv_operation("conv2d_strided", "conv2d", "strided 3x3 convolution", 3, 2, 1,
                   wrong={"iw0": "ow - PW"}),  # the stride applied to rows but forgotten on columns
    conv_operation("conv2d_pointwise", "conv2d", "pointwise (1x1) convolution", 1, 1, 0,
                   # the (C_out, C_in) weight read as (C_in, C_out), the nn.Linear-transposed mix-up
                   wrong={"w_offset": "(ci * (KH * KW) + tap)[:, None] * C_out + co[None, :]"}),
]
