"""Linear + row max + GELU, hybrid: the linear layer is the one library call (cuBLAS), the max over
each row and the exact GELU of it are one Triton kernel.

A program owns BLOCK_R rows and walks their columns in BLOCK_N chunks, keeping an elementwise running
maximum and reducing it across lanes once at the end. Bytes: 4 per GEMM output read, 4 per row
written; the GEMM (2*M*N*K FLOPs) dominates."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def row_max_gelu_kernel(z_ptr, out_ptr, M, N, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < M
    # kgym-scaffold: begin the maximum over each row's N values, then exact GELU (erf form) into best
    running = tl.full((BLOCK_R, BLOCK_N), float("-inf"), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        z = tl.load(z_ptr + rows[:, None] * N + cols[None, :],
                    mask=row_ok[:, None] & (cols[None, :] < N), other=float("-inf"))
        running = tl.maximum(running, z)
    best = tl.max(running, axis=1)
    best = 0.5 * best * (1.0 + tl.erf(best * 0.7071067811865476))
    # kgym-scaffold: end
    tl.store(out_ptr + rows, best, mask=row_ok)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = {{gemm}}  # the one library call
        M, N = z.shape
        out = torch.empty((M, 1), dtype=z.dtype, device=z.device)
        # a tile of up to 4096 values: up to 1024 columns of a row, as many rows as fill the rest
        BLOCK_N = min(triton.next_power_of_2(N), 1024)
        BLOCK_R = min(4096 // BLOCK_N, triton.next_power_of_2(M))
        grid = (triton.cdiv(M, BLOCK_R),)
        row_max_gelu_kernel[grid](z, out, M, N, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=8)
        return out
