# problem: level1/14_Matmul_for_upper_triangular_matrices.py
# sizes: N=70
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def triu_mm(a_ptr, b_ptr, c_ptr, N, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # C = triu(A @ B) for upper-triangular A and B: C[i, j] = sum_{i <= k <= j} A[i, k] B[k, j].
    # Tiles below the diagonal are zeros; a tile's k loop starts at its first row and stops past its
    # last column (every other product is a zero of A or of B)
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    if pn * BN + BN > pm * BM:
        k_lo = (pm * BM) // BK * BK
        k_hi = tl.minimum(pn * BN + BN, N)
        for k0 in range(k_lo, k_hi, BK):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * N + rk[None, :], mask=(rm[:, None] < N) & (rk[None, :] < N), other=0.0)
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < N) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(a, b, input_precision="ieee")
    acc = tl.where(rn[None, :] >= rm[:, None], acc, 0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < N) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        N = A.shape[0]
        C = torch.empty((N, N), device=A.device, dtype=A.dtype)
        triu_mm[(triton.cdiv(N, 16), triton.cdiv(N, 16))](A, B, C, N, BM=16, BN=16, BK=16)
        return C
