# reference: refs/sum_all_randn.py
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_sums(x_ptr, part_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + i, mask=i < N, other=0.0), 0))


@triton.jit
def total(part_ptr, o_ptr, P, PB: tl.constexpr):
    i = tl.arange(0, PB)
    tl.store(o_ptr, tl.sum(tl.load(part_ptr + i, mask=i < P, other=0.0), 0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        P = triton.cdiv(n, 1024)
        parts = torch.empty(P, device=x.device, dtype=torch.float32)
        partial_sums[(P,)](x, parts, n, BLOCK=1024)
        out = torch.empty((), device=x.device, dtype=torch.float32)
        total[(1,)](parts, out, P, PB=triton.next_power_of_2(P))
        return out
