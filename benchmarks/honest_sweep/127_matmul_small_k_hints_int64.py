# problem: level1/7_Matmul_with_small_K_dimension_.py
# sizes: M=45,N=70,K=24
import torch  # noqa: F401 (answers import it whether or not they use it)
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"BLOCK_K": lambda args: triton.next_power_of_2(args["K"])})
@triton.jit
def small_k_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # K fits one block: one dot per tile, no K loop; 64-bit row offsets for large M
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = tl.load(a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :],
                mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + rk[:, None].to(tl.int64) * stride_bk + rn[None, :],
                mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :], c,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = A.new_empty((M, N))
        BM, BN = 32, 32
        small_k_matmul[(triton.cdiv(M, BM), triton.cdiv(N, BN))](A, B, C, M, N, K, A.stride(0), B.stride(0),
                                                                C.stride(0), BLOCK_M=BM, BLOCK_N=BN)
        return C
