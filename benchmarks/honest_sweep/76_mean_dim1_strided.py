# problem: level1/48_Mean_reduction_over_a_dimension.py
# sizes: batch_size=3,dim1=67,dim2=45
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_mid_kernel(x_ptr, y_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    # x viewed (B, R, C); y[b, c] = mean_r x[b, r, c]: a program per (b, column block), rows looped
    b = tl.program_id(0)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    acc = tl.zeros((BR, BC), tl.float32)
    for r0 in range(0, R, BR):
        r = r0 + tl.arange(0, BR)
        acc += tl.load(x_ptr + b * R * C + r[:, None] * C + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C),
                       other=0.0)
    tl.store(y_ptr + b * C + c, tl.sum(acc, 0) / R, mask=c < C)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        shape = x.shape
        d = self.dim % x.dim()
        B = 1
        for s in shape[:d]:
            B *= s
        C = 1
        for s in shape[d + 1:]:
            C *= s
        R = shape[d]
        y = torch.empty(shape[:d] + shape[d + 1:], device=x.device, dtype=x.dtype)
        mean_mid_kernel[(B, triton.cdiv(C, 32))](x, y, R, C, BR=16, BC=32)
        return y
