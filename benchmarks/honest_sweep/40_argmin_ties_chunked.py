# reference: refs/argmin_ties_last.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def argmin_rows(x_ptr, o_ptr, D, BLOCK: tl.constexpr):
    # chunks of BLOCK: a strictly smaller value replaces the best, so ties keep the first index
    r = tl.program_id(0)
    best = float("inf")
    best_i = 0
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * D + c, mask=c < D, other=float("inf"))
        m = tl.min(x, 0)
        i = tl.argmin(x, 0) + s
        take = m < best
        best_i = tl.where(take, i, best_i)
        best = tl.where(take, m, best)
    tl.store(o_ptr + r, best_i.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        D = x.shape[-1]
        R = x.numel() // D
        out = torch.empty(x.shape[:-1], device=x.device, dtype=torch.int64)
        argmin_rows[(R,)](x, out, D, BLOCK=32)
        return out
