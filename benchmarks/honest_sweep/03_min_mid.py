# problem: level1/53_Min_reduction_over_a_dimension.py
# sizes: batch_size=4,dim1=37,dim2=29
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def min_mid(x_ptr, o_ptr, D1, D2, BLOCK: tl.constexpr, BJ: tl.constexpr):
    b = tl.program_id(0)
    j = tl.program_id(1) * BJ + tl.arange(0, BJ)
    r = tl.arange(0, BLOCK)
    m = (r[:, None] < D1) & (j[None, :] < D2)
    x = tl.load(x_ptr + b * D1 * D2 + r[:, None] * D2 + j[None, :], mask=m, other=float("inf"))
    tl.store(o_ptr + b * D2 + j, tl.min(x, 0), mask=j < D2)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        B, D1, D2 = x.shape
        out = torch.empty((B, D2), dtype=x.dtype, device=x.device)
        min_mid[(B, triton.cdiv(D2, 16))](x, out, D1, D2, BLOCK=triton.next_power_of_2(D1), BJ=16)
        return out
