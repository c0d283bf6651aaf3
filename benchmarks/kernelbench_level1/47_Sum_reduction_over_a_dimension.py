"""KernelBench level 1, problem 47 (sum over one dimension, keepdim), any input rank.

The input is seen as (outer, R, inner) with R the reduced dimension (a view, no copy); the output is
(outer, 1, inner) laid out as (outer, inner). Each program owns one outer index and BLOCK_J consecutive
inner indices and walks R in BLOCK_R-row tiles, loading coalesced along inner and accumulating in FP32.
At full size (128, 4096, 4095) the input has 2.1e9 elements, past int32, so offsets are int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_middle_kernel(x_ptr, out_ptr, R, inner, BLOCK_R: tl.constexpr, BLOCK_J: tl.constexpr):
    o = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1).to(tl.int64) * BLOCK_J + tl.arange(0, BLOCK_J)
    j_mask = j < inner
    rows = tl.arange(0, BLOCK_R)
    base = x_ptr + o * R * inner
    acc = tl.zeros([BLOCK_R, BLOCK_J], tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = (r0 + rows).to(tl.int64)
        mask = (r < R)[:, None] & j_mask[None, :]
        acc += tl.load(base + r[:, None] * inner + j[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + o * inner + j, tl.sum(acc, axis=0), mask=j_mask)


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
        out = torch.empty(shape[:d] + [1] + shape[d + 1:], dtype=x.dtype, device=x.device)
        BLOCK_J = min(128, triton.next_power_of_2(inner))
        grid = (outer, triton.cdiv(inner, BLOCK_J))
        sum_middle_kernel[grid](x, out, R, inner, BLOCK_R=32, BLOCK_J=BLOCK_J, num_warps=4)
        return out
