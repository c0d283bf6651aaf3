# reference: refs/prod_dim1.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mul(a, b):
    return a * b


@triton.jit
def prod_mid(x_ptr, o_ptr, D1, D2, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    j = tl.program_id(1)
    r = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + b * D1 * D2 + r * D2 + j, mask=r < D1, other=1.0)
    tl.store(o_ptr + b * D2 + j, tl.reduce(x, 0, mul))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        B, D1, D2 = x.shape
        out = torch.empty((B, D2), device=x.device, dtype=x.dtype)
        prod_mid[(B, D2)](x, out, D1, D2, BLOCK=triton.next_power_of_2(D1))
        return out
