# reference: refs/logcumsumexp_randn.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def lse_combine(m1, s1, m2, s2):
    # (running max, sum of exp(x - max)) pairs: an associative merge
    m = tl.maximum(m1, m2)
    a = tl.where(m1 == -float("inf"), 0.0, s1 * tl.exp(m1 - m))
    b = tl.where(m2 == -float("inf"), 0.0, s2 * tl.exp(m2 - m))
    return m, a + b


@triton.jit
def lcse_rows(x_ptr, o_ptr, C, BLOCK: tl.constexpr):
    # chunk by chunk: a prefix scan of (max, sum) pairs, each merged with the carry of the chunks before
    r = tl.program_id(0)
    cm = -float("inf")
    cs = 0.0
    for s in range(0, C, BLOCK):
        c = s + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + r * C + c, mask=c < C, other=-float("inf"))
        ones = tl.where(c < C, 1.0, 0.0)
        pm, ps = tl.associative_scan((x, ones), 0, lse_combine)
        m, tot = lse_combine(cm, cs, pm, ps)
        tl.store(o_ptr + r * C + c, m + tl.log(tot), mask=c < C)
        cm, cs = lse_combine(cm, cs, tl.max(x, 0), tl.sum(tl.where(c < C, tl.exp(x - tl.max(x, 0)), 0.0), 0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, C = x.shape
        out = torch.empty_like(x)
        lcse_rows[(R,)](x, out, C, BLOCK=128)
        return out
