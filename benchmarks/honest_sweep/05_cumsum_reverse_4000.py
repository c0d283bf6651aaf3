# problem: level1/91_cumsum_reverse.py
# sizes: batch_size=8,input_shape=(4000,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rev_cumsum(x_ptr, o_ptr, C, BLOCK: tl.constexpr):
    # from the row's end backwards, chunk by chunk, a running carry in float32
    r = tl.program_id(0)
    carry = 0.0
    for k in range(0, tl.cdiv(C, BLOCK)):
        end = C - k * BLOCK
        c = end - 1 - tl.arange(0, BLOCK)  # reversed indices of this chunk
        x = tl.load(x_ptr + r * C + c, mask=c >= 0, other=0.0)
        y = tl.cumsum(x, 0) + carry
        tl.store(o_ptr + r * C + c, y, mask=c >= 0)
        carry = carry + tl.sum(x, 0)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        R, C = x.shape
        out = torch.empty_like(x)
        rev_cumsum[(R,)](x, out, C, BLOCK=256)
        return out
