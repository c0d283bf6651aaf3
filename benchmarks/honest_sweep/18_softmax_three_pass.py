# problem: level1/23_Softmax.py
# sizes: batch_size=4,dim=5000
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max(x_ptr, D, r, BLOCK: tl.constexpr):
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(x_ptr + r * D + c, mask=c < D, other=-float("inf")))
    return tl.max(m, 0)


@triton.jit
def softmax_rows(x_ptr, o_ptr, D, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    mx = row_max(x_ptr, D, r, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * D + c, mask=c < D, other=-float("inf"))
        acc += tl.exp(x - mx)
    inv = 1.0 / tl.sum(acc, 0)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * D + c, mask=c < D, other=-float("inf"))
        tl.store(o_ptr + r * D + c, tl.exp(x - mx) * inv, mask=c < D)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, D = x.shape
        out = torch.empty_like(x)
        softmax_rows[(R,)](x, out, D, BLOCK=1024)
        return out
