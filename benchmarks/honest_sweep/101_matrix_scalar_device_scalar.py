# problem: level1/5_Matrix_scalar_multiplication.py
# sizes: M=45,N=67
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_by_ptr(a_ptr, s_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    s = tl.load(s_ptr)  # the scalar lives on the device: one compiled kernel for every value of s
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=m) * s, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, s):
        A = A.contiguous()
        s_dev = torch.tensor(s, device=A.device, dtype=A.dtype)
        C = torch.empty_like(A)
        n = A.numel()
        scale_by_ptr[(triton.cdiv(n, 512),)](A, s_dev, C, n, BLOCK=512)
        return C
