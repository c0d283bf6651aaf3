"""KernelBench level 1, problem 49 (max over one dimension, the values of `torch.max(x, dim)`), any rank.

The input is seen as (outer, R, inner) with R the reduced dimension (a view, no copy); the output is
(outer, inner). Each program owns one outer index and BLOCK_J consecutive inner indices and walks R in
BLOCK_R-row tiles with a running maximum (padding is -inf, so it never wins). NaN propagates as torch's
max does: a lane that has seen a NaN keeps it. At full size (128, 4096, 4095) the input has 2.1e9
elements, so offsets are int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def max_middle_kernel(x_ptr, out_ptr, R, inner, BLOCK_R: tl.constexpr, BLOCK_J: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1).to(tl.int64) * BLOCK_J + tl.arange(0, BLOCK_J)
    j_mask = j < inner
    rows = tl.arange(0, BLOCK_R)
    base = x_ptr + o * R * inner
    best = tl.full([BLOCK_R, BLOCK_J], float("-inf"), tl.float32)
    seen_nan = tl.zeros([BLOCK_R, BLOCK_J], tl.int32)
    for r0 in range(0, R, BLOCK_R):
        r = (r0 + rows).to(tl.int64)
        mask = (r < R)[:, None] & j_mask[None, :]
        x = tl.load(base + r[:, None] * inner + j[None, :], mask=mask, other=float("-inf")).to(tl.float32)
        seen_nan = tl.maximum(seen_nan, (x != x).to(tl.int32))
        best = tl.maximum(best, x)
    result = tl.max(best, axis=0)
    any_nan = tl.max(seen_nan, axis=0) > 0
    result = tl.where(any_nan, float("nan"), result)
    tl.store(out_ptr + o * inner + j, result, mask=j_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        d = self.dim % x.dim()
        shape = list(x.shape)
        R = shape[d]
        outer = 1
        for s in shape[:d]:
            outer *= s
        inner = 1
        for s in shape[d + 1:]:
            inner *= s
        out = torch.empty(shape[:d] + shape[d + 1:], dtype=x.dtype, device=x.device)
        BLOCK_J = min(128, triton.next_power_of_2(inner))
        grid = (outer, triton.cdiv(inner, BLOCK_J))
        max_middle_kernel[grid](x, out, R, inner, BLOCK_R=32, BLOCK_J=BLOCK_J, num_warps=4)
        return out
