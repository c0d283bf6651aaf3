# problem: level1/88_MinGPTNewGelu.py
# sizes: batch_size=7,dim=515
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # module-level, as tutorials do
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@triton.jit
def new_gelu_kernel(x_ptr, y_ptr, n, c0, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    inner = c0 * (x + 0.044715 * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * inner) - 1.0  # tanh
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + t), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty(x.shape, device=x.device if x.device.type != DEVICE.type else DEVICE, dtype=x.dtype)
        n = x.numel()
        new_gelu_kernel[(triton.cdiv(n, 1024),)](x, y, n, SQRT_2_OVER_PI, BLOCK=1024, num_warps=4, num_stages=1)
        return y
