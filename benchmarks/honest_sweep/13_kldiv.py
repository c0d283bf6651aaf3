# problem: level1/98_KLDivLoss.py
# sizes: batch_size=8,input_shape=(1500,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kl_rows(p_ptr, t_ptr, part_ptr, D, BLOCK: tl.constexpr):
    # kl_div(log p, t) summed over a row: t * (log t - log p), 0 where t == 0 (xlogy)
    r = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, D, BLOCK):
        c = s + tl.arange(0, BLOCK)
        p = tl.load(p_ptr + r * D + c, mask=c < D, other=1.0)
        t = tl.load(t_ptr + r * D + c, mask=c < D, other=0.0)
        term = tl.where(t == 0, 0.0, t * tl.log(t)) - t * tl.log(p)
        acc += tl.where(c < D, term, 0.0)
    tl.store(part_ptr + r, tl.sum(acc, 0))


@triton.jit
def batchmean(part_ptr, o_ptr, R, RB: tl.constexpr):
    i = tl.arange(0, RB)
    tl.store(o_ptr, tl.sum(tl.load(part_ptr + i, mask=i < R, other=0.0), 0) / R)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        p, t = predictions.contiguous(), targets.contiguous()
        R, D = p.shape
        parts = torch.empty(R, device=p.device, dtype=torch.float32)
        kl_rows[(R,)](p, t, parts, D, BLOCK=512)
        out = torch.empty((), device=p.device, dtype=torch.float32)
        batchmean[(1,)](parts, out, R, RB=triton.next_power_of_2(R))
        return out
