# problem: level1/24_LogSoftmax.py
# sizes: batch_size=4,dim=5000
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def log_softmax_rows(x_ptr, o_ptr, D, BLOCK: tl.constexpr):
    # one pass for the running max and rescaled sum of exp (online), one pass to write x - max - log(sum)
    r = tl.program_id(0)
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    l = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * D + c, mask=c < D, other=-float("inf"))
        m_new = tl.maximum(m, x)
        l = l * tl.exp(tl.where(m_new == -float("inf"), 0.0, m - m_new)) + tl.where(c < D, tl.exp(x - m_new), 0.0)
        m = m_new
    mx = tl.max(m, 0)
    total = tl.sum(l * tl.exp(m - mx), 0)
    lse = mx + tl.log(total)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * D + c, mask=c < D, other=0.0)
        tl.store(o_ptr + r * D + c, x - lse, mask=c < D)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        R, D = x.shape
        out = torch.empty_like(x)
        log_softmax_rows[(R,)](x, out, D, BLOCK=1024)
        return out
