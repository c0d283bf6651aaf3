# reference: refs/sum_dim0.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim0(x_ptr, o_ptr, R, C, BLOCK: tl.constexpr, BR: tl.constexpr):
    # columns of the (R, C) view; rows in chunks of BR, a (BR, BLOCK) tile summed along rows
    c = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, R, BR):
        r = s + tl.arange(0, BR)
        acc += tl.sum(tl.load(x_ptr + r[:, None] * C + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C), other=0.0), 0)
    tl.store(o_ptr + c, acc, mask=c < C)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R = x.shape[0]
        out = torch.empty(x.shape[1:], device=x.device, dtype=x.dtype)
        C = out.numel()
        sum_dim0[(triton.cdiv(C, 32),)](x, out, R, C, BLOCK=32, BR=64)
        return out
