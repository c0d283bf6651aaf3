# problem: level1/92_cumsum_exclusive.py
# sizes: batch_size=8,input_shape=(1000,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def excl_cumsum(x_ptr, o_ptr, C, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    carry = 0.0
    for s in range(0, C, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * C + c, mask=c < C, other=0.0)
        incl = tl.cumsum(x, 0)
        tl.store(o_ptr + r * C + c, incl - x + carry, mask=c < C)
        carry = carry + tl.sum(x, 0)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        R, C = x.shape
        out = torch.empty_like(x)
        excl_cumsum[(R,)](x, out, C, BLOCK=128)
        return out
