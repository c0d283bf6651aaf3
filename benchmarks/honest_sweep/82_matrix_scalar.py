# problem: level1/5_Matrix_scalar_multiplication.py
# sizes: M=67,N=45
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(a_ptr, c_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=m) * s, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, s):
        A = A.contiguous()
        C = torch.empty_like(A)
        n = A.numel()
        scale_kernel[(triton.cdiv(n, 1024),)](A, C, s, n, BLOCK=1024)
        return C
