# reference: refs/std_last.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def std_rows(x_ptr, o_ptr, D, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + r * D + c, mask=c < D, other=0.0)
    mean = tl.sum(acc, 0) / D
    acc2 = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        d = tl.where(c < D, tl.load(x_ptr + r * D + c, mask=c < D, other=0.0) - mean, 0.0)
        acc2 += d * d
    tl.store(o_ptr + r, tl.sqrt(tl.sum(acc2, 0) / (D - 1)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, D = x.shape
        out = torch.empty((R,), device=x.device, dtype=x.dtype)
        std_rows[(R,)](x, out, D, BLOCK=512)
        return out
