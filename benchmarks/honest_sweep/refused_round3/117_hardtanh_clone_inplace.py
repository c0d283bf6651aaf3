# problem: level1/32_HardTanh.py
# sizes: batch_size=5,dim=1111
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hardtanh_inplace_kernel(x_ptr, n, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(x_ptr + offs, tl.minimum(tl.maximum(x, lo), hi), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.min_val = -1.0
        self.max_val = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x.clone(memory_format=torch.contiguous_format)  # a fresh copy; the kernel clamps it in place
        n = out.numel()
        hardtanh_inplace_kernel[(triton.cdiv(n, 1024),)](out, n, self.min_val, self.max_val, BLOCK=1024)
        return out
