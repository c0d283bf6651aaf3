"""Linear + {{act_name}} with scaling and a residual in one Triton kernel: y = {{formula}}.

One program per BLOCK_M x BLOCK_N tile of y: a K loop accumulates x @ W^T in fp32 registers, then
the tail (bias, activation, scaling, residual) runs on the accumulator before the only store, so the
GEMM result never goes to memory. FLOPs: 2*M*N*K (+ a few per output for the tail).
Bytes: at least 4*(M*K + N*K + N + 2*M*N); W (N x K) is re-read by every row of tiles, from L2.
tl.dot runs with input_precision="ieee": TF32, the GPU default, misses the 1e-4 tolerance."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def {{name}}_kernel(
    x_ptr, w_ptr, bias_ptr, res_ptr, out_ptr, M, N, K, scaling,
    stride_xm, stride_wn, stride_rm, stride_om,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # program_id(0) runs fastest: neighbouring programs share one W column block while it is in L2.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_ok = ks < K
        x = tl.load(x_ptr + rows[:, None] * stride_xm + ks[None, :],
                    mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        # W is (N, K) row-major: load a [BLOCK_N, BLOCK_K] tile along its contiguous K and transpose it
        # in registers rather than gathering a strided [BLOCK_K, BLOCK_N] tile.
        w = tl.load(w_ptr + cols[:, None] * stride_wn + ks[None, :],
                    mask=col_ok[:, None] & k_ok[None, :], other=0.0)
        acc = tl.dot(x, tl.trans(w), acc, input_precision="ieee")
    z = acc + tl.load(bias_ptr + cols, mask=col_ok, other=0.0)[None, :]
    mask = row_ok[:, None] & col_ok[None, :]
    r = tl.load(res_ptr + rows[:, None] * stride_rm + cols[None, :], mask=mask, other=0.0)
    out = {{tail}}
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scaling: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scaling = scaling

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        residual = residual.contiguous()
        w = self.linear.weight
        M, K = x.shape
        N = w.shape[0]
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        # 64x64 fp32 tiles, 4 warps: 32 accumulators per thread; 3 stages of x/W tiles = 48 KB shared.
        BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        {{name}}_kernel[grid](
            x, w, self.linear.bias, residual, out, M, N, K, self.scaling,
            x.stride(0), w.stride(0), residual.stride(0), out.stride(0),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4, num_stages=3,
        )
        return out
