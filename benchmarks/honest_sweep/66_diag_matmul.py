# problem: level1/12_Matmul_with_diagonal_matrices_.py
# sizes: M=70,N=33
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def diag_scale_rows(a_ptr, b_ptr, c_ptr, M, BLOCK: tl.constexpr):
    # C[i, :] = A[i] * B[i, :]: one program per row of B
    i = tl.program_id(0)
    a = tl.load(a_ptr + i)
    for s in range(0, M, BLOCK):
        j = s + tl.arange(0, BLOCK)
        tl.store(c_ptr + i * M + j, a * tl.load(b_ptr + i * M + j, mask=j < M), mask=j < M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        B = B.contiguous()
        N, M = B.shape
        C = torch.empty_like(B)
        diag_scale_rows[(N,)](A, B, C, M, BLOCK=64)
        return C
