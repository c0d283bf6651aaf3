# reference: refs/logsumexp_dim1.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def lse_rows(x_ptr, o_ptr, D, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(x_ptr + r * D + c, mask=c < D, other=-float("inf")))
    mx = tl.max(m, 0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        acc += tl.exp(tl.load(x_ptr + r * D + c, mask=c < D, other=-float("inf")) - mx)
    tl.store(o_ptr + r, mx + tl.log(tl.sum(acc, 0)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, D = x.shape
        out = torch.empty((R,), device=x.device, dtype=x.dtype)
        lse_rows[(R,)](x, out, D, BLOCK=1024)
        return out
