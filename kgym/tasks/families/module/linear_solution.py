"""nn.Linear in Triton: y = x @ W^T + b as one tiled GEMM with the bias fused into its epilogue. Each
program computes a BLOCK_M x BLOCK_N tile of y, stepping over in_features BLOCK_K at a time; W is
read in its (out_features, in_features) layout, as a transposed tile.
FLOPs: 2 * batch * in_features * out_features. Bytes moved: x, W and y once each (4 bytes per
element) plus tile re-reads served from L2."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                  stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # batch rows of x and y
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)  # output features: rows of W
    row_ok = rows < M
    col_ok = cols < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    # kgym-scaffold: begin the loop over in_features in BLOCK_K steps (x tile, transposed W tile, IEEE tl.dot), then the bias
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_ok = ks < K
        xt = tl.load(x_ptr + rows[:, None] * stride_xm + ks[None, :] * stride_xk,
                     mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        wt = tl.load(w_ptr + {{w_offset}}, mask=k_ok[:, None] & col_ok[None, :], other=0.0)  # (BLOCK_K, BLOCK_N)
        # IEEE fp32: the default TF32 on a GPU misses the 1e-4 tolerance.
        acc = tl.dot(xt, wt, acc, input_precision="ieee")
    acc += tl.load(b_ptr + cols, mask=col_ok, other=0.0)[None, :]
    # kgym-scaffold: end
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :] * stride_yn, acc,
             mask=row_ok[:, None] & col_ok[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        # The same module as the reference, so the seed gives the same weight and bias.
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.linear.weight
        m, k = x.shape
        n = w.shape[0]
        y = torch.empty((m, n), device=x.device, dtype=x.dtype)
        # tl.dot needs every tile side >= 16. Triton's CPU interpreter pays per program and per op, not
        # per element: there, few large tiles.
        BLOCK_M = 64 if x.is_cuda else min(4096, max(16, triton.next_power_of_2(m)))
        BLOCK_N = min(64 if x.is_cuda else 256, max(16, triton.next_power_of_2(n)))
        BLOCK_K = min(32 if x.is_cuda else 64, max(16, triton.next_power_of_2(k)))
        grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
        linear_kernel[grid](x, w, self.linear.bias, y, m, n, k,
                            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
        return y
