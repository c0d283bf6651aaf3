# problem: level1/37_FrobeniusNorm_.py
# sizes: batch_size=2,features=4,dim1=30,dim2=33
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sq_partials(x_ptr, part_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < N, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x * x, 0))


@triton.jit
def scale_by_norm(x_ptr, part_ptr, o_ptr, N, P, BLOCK: tl.constexpr, PB: tl.constexpr):
    p = tl.arange(0, PB)
    total = tl.sum(tl.load(part_ptr + p, mask=p < P, other=0.0), 0)
    inv = 1.0 / tl.sqrt(total)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < N, other=0.0)
    tl.store(o_ptr + i, x * inv, mask=i < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        BLOCK = 512
        P = triton.cdiv(n, BLOCK)
        parts = torch.empty(P, device=x.device, dtype=torch.float32)
        sq_partials[(P,)](x, parts, n, BLOCK=BLOCK)
        out = torch.empty_like(x)
        scale_by_norm[(P,)](x, parts, out, n, P, BLOCK=BLOCK, PB=triton.next_power_of_2(P))
        return out
