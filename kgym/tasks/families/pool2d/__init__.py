"""pool2d family: 2-D max and average pooling of an (N, C, H, W) tensor.

The seed draws the input shape, a square window (2 or 3) and the stride (1 or 2); they reach the
model as init inputs. Four operations: max and average pooling without padding, max pooling padded
with -inf, and average pooling padded with count_include_pad=False (the divisor counts only the taps
inside the input). Padding is kernel_size // 2, derived from the drawn window: a shape knob must be
at least 1, so padding 0 is an operation of its own rather than a drawn value. One reference and one
solution file shared by all four (they differ in the reduction, filled through slots). The wrong
answers: the window one column short, rows strided by the output width, padding taps loaded as 0
where the reference pads with -inf, and padding counted in the average.
Does not cover dilation, ceil_mode, non-square windows or adaptive pooling.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from kgym.tasks.operation import Operation
from kgym.tasks.shapes import Budget, dim

HERE = Path(__file__).parent
MAX_KERNEL = 7  # the solution unrolls the window; beyond this, compile time and registers grow


def shapes(rng: random.Random, budget: Budget) -> dict[str, int]:
    kernel_size, stride = rng.choice((2, 3)), rng.choice((1, 2))
    side_hi = min(1024, math.isqrt(budget.hi))
    height = dim(rng, 5, side_hi)
    width = dim(rng, 5, min(1024, budget.hi // height))
    plane = height * width
    planes_lo, planes_hi = max(1, -(-budget.lo // plane)), budget.hi // plane
    batch_size = dim(rng, 1, min(16, planes_hi))
    if -(-planes_lo // batch_size) > planes_hi // batch_size:
        batch_size = 1  # no channel count fits this batch into the budget; one image always does
    channels = dim(rng, -(-planes_lo // batch_size), planes_hi // batch_size)
    return {"batch_size": batch_size, "channels": channels, "height": height, "width": width,
            "kernel_size": kernel_size, "stride": stride}


def _check(padded: bool):
    def check(s: dict[str, int]) -> str | None:
        k = s["kernel_size"]
        if k > MAX_KERNEL:
            return f"kernel_size {k} is above this task's limit of {MAX_KERNEL}"
        pad = k // 2 if padded else 0
        if min(s["height"], s["width"]) + 2 * pad < k:
            return (f"a {k}x{k} window does not fit a {s['height']}x{s['width']} input"
                    + (f" padded by {pad}" if pad else ""))
        return None
    return check


def _op(name: str, title: str, semantics: str, torch_module: str, padded: bool, kind: str, output: str,
        wrong: dict[str, str]) -> Operation:
    if kind == "max":
        reduce = {"acc_init": 'tl.full([BLOCK], float("-inf"), tl.float32)', "pad_value": 'float("-inf")',
                  "combine": "tl.maximum(acc, v)", "flops": "KH * KW compares per output"}
    else:
        reduce = {"acc_init": "tl.zeros([BLOCK], tl.float32)", "pad_value": "0.0", "combine": "acc + v",
                  "flops": "KH * KW adds and one divide per output"}
    return Operation(
        name=name, family="pool2d", folder=HERE, description=f"2-D {title.lower()}, {semantics}",
        reference="reference.py", solution="solution.py", wrong="solution.py", shapes=shapes,
        check=_check(padded),
        slots={"title": title, "semantics": semantics, "torch_module": torch_module,
               "padding": "kernel_size // 2" if padded else "0", "kernel": f"{name}_kernel",
               "kw_range": "KW", "row_stride": "W", "output": output, **reduce},
        wrong_slots=wrong)


# count_include_pad=False: the divisor is the number of taps inside the input; the window is
# clipped to [0, H) x [0, W) (floor mode never lets it pass the far padding).
_VALID_TAPS = ("rows_in = tl.minimum(ih0 + KH, H) - tl.maximum(ih0, 0)\n"
               "    cols_in = tl.minimum(iw0 + KW, W) - tl.maximum(iw0, 0)\n"
               "    y = acc / (rows_in * cols_in).to(tl.float32)")

OPERATIONS = [
    _op("max_pool2d", "Max pooling", "no padding", "nn.MaxPool2d(kernel_size, stride=stride, padding=padding)",
        padded=False, kind="max", output="y = acc",
        wrong={"kw_range": "KW - 1"}),  # range(KW - 1): the window's last column never read
    _op("max_pool2d_padded", "Max pooling", "padding kernel_size // 2 (pads never win)",
        "nn.MaxPool2d(kernel_size, stride=stride, padding=padding)",
        padded=True, kind="max", output="y = acc",
        wrong={"pad_value": "0.0"}),  # pads load as 0: a border window of negatives returns 0
    _op("avg_pool2d", "Average pooling", "no padding", "nn.AvgPool2d(kernel_size, stride=stride, padding=padding)",
        padded=False, kind="avg", output="y = acc / (KH * KW)",
        wrong={"row_stride": "OW"}),  # input rows strided by the output's width
    _op("avg_pool2d_padded", "Average pooling", "padding kernel_size // 2, count_include_pad=False",
        "nn.AvgPool2d(kernel_size, stride=stride, padding=padding, count_include_pad=False)",
        padded=True, kind="avg", output=_VALID_TAPS,
        wrong={"output": "y = acc / (KH * KW)"}),  # padding counted in the average (PyTorch's default)
]
