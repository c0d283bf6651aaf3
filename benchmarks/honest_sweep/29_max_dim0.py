# reference: refs/max_dim0.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def max_dim0(x_ptr, o_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    c = tl.program_id(0) * BC + tl.arange(0, BC)
    m = tl.full((BC,), -float("inf"), tl.float32)
    for s in range(0, R, BR):
        r = s + tl.arange(0, BR)
        x = tl.load(x_ptr + r[:, None] * C + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C), other=-float("inf"))
        m = tl.maximum(m, tl.max(x, 0))
    tl.store(o_ptr + c, m, mask=c < C)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, C = x.shape
        out = torch.empty((C,), device=x.device, dtype=x.dtype)
        max_dim0[(triton.cdiv(C, 16),)](x, out, R, C, BR=16, BC=16)
        return out
