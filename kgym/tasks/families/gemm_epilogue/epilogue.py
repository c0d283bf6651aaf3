"""Linear + {{act_name}} with scaling and a residual, hybrid: y = {{formula}}.

The GEMM x @ W^T is one library call (cuBLAS); the tail (bias, activation, scaling, residual) is one
Triton kernel over BLOCK_M x BLOCK_N tiles of it, so the GEMM result is read once instead of once per
PyTorch op. Tail bytes: 12 per output (read the GEMM result and the residual, write y) + 4*N for b."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def {{name}}_tail(
    xw_ptr, bias_ptr, res_ptr, out_ptr, M, N, scaling,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    # kgym-scaffold: begin the fused tail: out from the GEMM result, the bias, scaling and the residual
    b = tl.load(bias_ptr + cols, mask=cols < N, other=0.0)
    z = tl.load(xw_ptr + offs, mask=mask, other=0.0) + b[None, :]
    r = tl.load(res_ptr + offs, mask=mask, other=0.0)
    out = {{tail}}
    # kgym-scaffold: end
    tl.store(out_ptr + offs, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scaling: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scaling = scaling

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        # the one library call: x @ W^T without the bias, which the tail adds
        xw = torch.mm(x, self.linear.weight.t())
        residual = residual.contiguous()
        out = torch.empty_like(xw)
        M, N = xw.shape
        # tiles of 4096 outputs: as wide as the row allows (up to 256 columns), rows to fill the rest
        BLOCK_N = min(triton.next_power_of_2(N), 256)
        BLOCK_M = 4096 // BLOCK_N
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        {{name}}_tail[grid](
            xw, self.linear.bias, residual, out, M, N, self.scaling,
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8,
        )
        return out
