# problem: level1/90_cumprod.py
# sizes: batch_size=8,input_shape=(300,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mul(a, b):
    return a * b


@triton.jit
def cumprod_rows(x_ptr, o_ptr, C, BLOCK: tl.constexpr):
    # blocked scan: each chunk's inclusive product scan times the running product of the chunks before
    r = tl.program_id(0)
    carry = 1.0
    for s in range(0, C, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * C + c, mask=c < C, other=1.0)
        y = tl.associative_scan(x, 0, mul) * carry
        tl.store(o_ptr + r * C + c, y, mask=c < C)
        carry = carry * tl.reduce(x, 0, mul)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        R, C = x.shape
        out = torch.empty_like(x)
        cumprod_rows[(R,)](x, out, C, BLOCK=64)
        return out
