# problem: level1/4_Matrix_vector_multiplication_.py
# sizes: M=37,K=1500
import torch
import torch.nn as nn
import triton
import triton.language as tl


# split-K over K with atomic adds into a zeroed output; autotune zeroes the output between its trials
@triton.autotune(
    configs=[triton.Config({"BLOCK_M": 16, "BLOCK_K": 256, "SPLIT_K": 2}, num_warps=4),
             triton.Config({"BLOCK_M": 32, "BLOCK_K": 128, "SPLIT_K": 4}, num_warps=4)],
    key=["M", "K"],
    reset_to_zero=["c_ptr"],
)
@triton.jit
def gemv_splitk(a_ptr, b_ptr, c_ptr, M, K, stride_am, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
                SPLIT_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), tl.float32)
    for k0 in range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None].to(tl.int64) * stride_am + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk, mask=rk < K, other=0.0)
        acc += tl.sum(a * b[None, :], axis=1)
    tl.atomic_add(c_ptr + rm, acc, mask=rm < M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A = A.contiguous()
        M, K = A.shape
        b = B.contiguous().view(-1)
        C = torch.zeros((M, 1), device=A.device, dtype=torch.float32)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), meta["SPLIT_K"])  # noqa: E731
        gemv_splitk[grid](A, b, C, M, K, A.stride(0))
        return C
