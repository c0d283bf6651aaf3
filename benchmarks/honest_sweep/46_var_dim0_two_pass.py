# reference: refs/var_dim0.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def var_cols(x_ptr, o_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    c = tl.program_id(0) * BC + tl.arange(0, BC)
    s1 = tl.zeros((BC,), tl.float32)
    for s in range(0, R, BR):
        r = s + tl.arange(0, BR)
        s1 += tl.sum(tl.load(x_ptr + r[:, None] * C + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C), other=0.0), 0)
    mean = s1 / R
    s2 = tl.zeros((BC,), tl.float32)
    for s in range(0, R, BR):
        r = s + tl.arange(0, BR)
        m = (r[:, None] < R) & (c[None, :] < C)
        d = tl.where(m, tl.load(x_ptr + r[:, None] * C + c[None, :], mask=m, other=0.0) - mean[None, :], 0.0)
        s2 += tl.sum(d * d, 0)
    tl.store(o_ptr + c, s2 / (R - 1), mask=c < C)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, C = x.shape
        out = torch.empty((C,), device=x.device, dtype=x.dtype)
        var_cols[(triton.cdiv(C, 8),)](x, out, R, C, BR=128, BC=8)
        return out
