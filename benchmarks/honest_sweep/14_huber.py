# problem: level1/96_HuberLoss.py
# sizes: batch_size=8,input_shape=(1500,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def huber_partials(a_ptr, b_ptr, part_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    d = tl.load(a_ptr + i, mask=i < N, other=0.0) - tl.load(b_ptr + i, mask=i < N, other=0.0)
    ad = tl.abs(d)
    l = tl.where(ad < 1.0, 0.5 * d * d, ad - 0.5)
    tl.store(part_ptr + pid, tl.sum(l, 0))


@triton.jit
def mean_of(part_ptr, o_ptr, P, N, PB: tl.constexpr):
    i = tl.arange(0, PB)
    tl.store(o_ptr, tl.sum(tl.load(part_ptr + i, mask=i < P, other=0.0), 0) / N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        a, b = predictions.contiguous(), targets.contiguous()
        n = a.numel()
        P = triton.cdiv(n, 1024)
        parts = torch.empty(P, device=a.device, dtype=torch.float32)
        huber_partials[(P,)](a, b, parts, n, BLOCK=1024)
        out = torch.empty((), device=a.device, dtype=torch.float32)
        mean_of[(1,)](parts, out, P, n, PB=triton.next_power_of_2(P))
        return out
