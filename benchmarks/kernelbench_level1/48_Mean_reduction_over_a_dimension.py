"""KernelBench level 1, problem 48 (mean over one dimension), any input rank.

The input is seen as (outer, R, inner) with R the reduced dimension (a view, no copy); output is
(outer, inner). Each program owns one outer index and BLOCK_J consecutive inner indices, and walks R
in BLOCK_R-row tiles, loads coalesced along inner, accumulates in FP32 and divides by R at the end.
4 bytes read per input element, one add each. At full size (128, 4096, 4095) the input has 2.1e9
elements, at the edge of int32, so all offsets are int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_middle_kernel(x_ptr, out_ptr, R, inner, inv_r, BLOCK_R: tl.constexpr, BLOCK_J: tl.constexpr):
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
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + o * inner + j, total * inv_r, mask=j_mask)


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
        BLOCK_R = 32
        grid = (outer, triton.cdiv(inner, BLOCK_J))
        mean_middle_kernel[grid](x, out, R, inner, 1.0 / R, BLOCK_R=BLOCK_R, BLOCK_J=BLOCK_J, num_warps=4)
        return out
