# problem: level1/37_FrobeniusNorm_.py
# sizes: batch_size=2,features=4,dim1=30,dim2=33
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sq_atomic(x_ptr, acc_ptr, N, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < N, other=0.0)
    tl.atomic_add(acc_ptr, tl.sum(x * x, 0))


@triton.jit
def zero(acc_ptr):
    tl.store(acc_ptr, 0.0)


@triton.jit
def scale(x_ptr, acc_ptr, o_ptr, N, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < N, other=0.0)
    tl.store(o_ptr + i, x / tl.sqrt(tl.load(acc_ptr)), mask=i < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        acc = torch.empty(1, device=x.device, dtype=torch.float32)
        zero[(1,)](acc)
        grid = (triton.cdiv(n, 512),)
        sq_atomic[grid](x, acc, n, BLOCK=512)
        out = torch.empty_like(x)
        scale[grid](x, acc, out, n, BLOCK=512)
        return out
