# problem: level1/100_HingeLoss.py
# sizes: batch_size=200,input_shape=(200,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hinge_partials(p_ptr, t_ptr, part_ptr, N, D, BLOCK: tl.constexpr):
    # targets has shape (batch,), broadcast against predictions (batch, D) as the reference's
    # predictions * targets does: (B, D) * (B,) broadcasts over the last dim, so element (i, j) takes t[j]
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    m = i < N
    p = tl.load(p_ptr + i, mask=m, other=0.0)
    t = tl.load(t_ptr + i % D, mask=m, other=0.0)
    l = tl.where(m, tl.maximum(1.0 - p * t, 0.0), 0.0)
    tl.store(part_ptr + pid, tl.sum(l, 0))


@triton.jit
def mean_of(part_ptr, o_ptr, P, N, PB: tl.constexpr):
    i = tl.arange(0, PB)
    tl.store(o_ptr, tl.sum(tl.load(part_ptr + i, mask=i < P, other=0.0), 0) / N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        p, t = predictions.contiguous(), targets.contiguous()
        n = p.numel()
        P = triton.cdiv(n, 1024)
        parts = torch.empty(P, device=p.device, dtype=torch.float32)
        hinge_partials[(P,)](p, t, parts, n, p.shape[-1], BLOCK=1024)
        out = torch.empty((), device=p.device, dtype=torch.float32)
        mean_of[(1,)](parts, out, P, n, PB=triton.next_power_of_2(P))
        return out
