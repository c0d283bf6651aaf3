"""KernelBench level 1, problem 5 (matrix-scalar multiplication): C = A * s.

Streaming: 8 bytes and one multiply per element (FP32); the full size is 65536 x 16384 (2^30
elements, 8.6 GB moved). Offsets are int64 so the byte addresses past 2^31 are right. `s` is a
Python float, passed to the kernel as an fp32 scalar, as PyTorch does for a float tensor times a
Python scalar.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(a_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, a * s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        A = A.contiguous()
        out = torch.empty_like(A)
        n = A.numel()
        BLOCK = 4096
        scale_kernel[(triton.cdiv(n, BLOCK),)](A, out, n, float(s), BLOCK=BLOCK, num_warps=8)
        return out
