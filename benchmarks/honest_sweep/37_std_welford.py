# reference: refs/std_last.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def std_welford(x_ptr, o_ptr, D, BLOCK: tl.constexpr):
    # per-lane Welford over chunks, lanes merged pairwise (Chan) at the end
    r = tl.program_id(0)
    mean = tl.zeros((BLOCK,), tl.float32)
    m2 = tl.zeros((BLOCK,), tl.float32)
    cnt = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        valid = c < D
        x = tl.load(x_ptr + r * D + c, mask=valid, other=0.0)
        cnt_new = cnt + tl.where(valid, 1.0, 0.0)
        delta = x - mean
        mean = tl.where(valid, mean + delta / tl.maximum(cnt_new, 1.0), mean)
        m2 = tl.where(valid, m2 + delta * (x - mean), m2)
        cnt = cnt_new
    total = tl.sum(cnt, 0)
    gmean = tl.sum(mean * cnt, 0) / total
    d = mean - gmean
    gm2 = tl.sum(m2 + d * d * cnt, 0)
    tl.store(o_ptr + r, tl.sqrt(gm2 / (total - 1.0)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        R, D = x.shape
        out = torch.empty((R,), device=x.device, dtype=x.dtype)
        std_welford[(R,)](x, out, D, BLOCK=256)
        return out
