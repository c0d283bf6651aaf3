"""KernelBench level 1, problem 22 (Tanh), elementwise.

tanh(|x|) = (1 - e) / (1 + e) with e = exp(-2|x|) (never overflows), sign restored after. Near 0
that quotient loses digits to cancellation (1 - e), which the tolerance's small-output case (inputs
scaled by 0.01) would see, so |x| < 0.05 uses the odd series x - x^3/3 + 2x^5/15 - 17x^7/315
(truncation error below 1e-12 relative there). Streaming: 8 bytes and one exp per element (FP32);
int64 offsets (1.6e9 elements at full size).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tanh_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    a = tl.abs(x)
    e = tl.exp(-2.0 * a)
    big = (1.0 - e) / (1.0 + e)
    x2 = x * x
    small = x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0))))
    y = tl.where(a < 0.05, small, tl.where(x < 0.0, -big, big))
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 4096
        tanh_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK, num_warps=8)
        return out
