# problem: level1/49_Max_reduction_over_a_dimension.py
# sizes: batch_size=3,dim1=200,dim2=19
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def max_split_kernel(x_ptr, out_ptr, R, I, ROWS_PER: tl.constexpr, BLOCK_I: tl.constexpr):
    # x viewed (O, R, I); each program reduces ROWS_PER rows of R and meets the others by atomic max
    o = tl.program_id(0)
    i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)
    r0 = tl.program_id(2) * ROWS_PER
    im = i < I
    best = tl.full((BLOCK_I,), float("-inf"), tl.float32)
    for rr in range(0, ROWS_PER):
        r = r0 + rr
        v = tl.load(x_ptr + (o * R + r) * I + i, mask=im & (r < R), other=float("-inf"))
        best = tl.maximum(best, v)
    tl.atomic_max(out_ptr + o * I + i, best, mask=im)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        d = self.dim % x.dim()
        O = 1
        for s in x.shape[:d]:
            O *= s
        R = x.shape[d]
        I = x.numel() // (O * R)
        out = torch.full(x.shape[:d] + x.shape[d + 1:], float("-inf"), device=x.device, dtype=torch.float32)
        ROWS_PER, BLOCK_I = 64, 32
        grid = (O, triton.cdiv(I, BLOCK_I), triton.cdiv(R, ROWS_PER))
        max_split_kernel[grid](x, out, R, I, ROWS_PER=ROWS_PER, BLOCK_I=BLOCK_I)
        return out
