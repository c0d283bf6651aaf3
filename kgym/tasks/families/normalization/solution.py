"""{{title}} in Triton: each program normalises BLOCK_O rows, in two sweeps over BLOCK_D-wide tiles:
the first accumulates the row statistics, the second normalises and applies the affine parameters.

Rows are read twice; the second read of a program's rows (at most 64 KB) is normally served from
L2, so HBM traffic stays ~8 bytes per element (one load, one store) plus the parameters once per
tile. FLOPs: ~{{flops}} per element. Bandwidth-bound.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def {{kernel}}(x_ptr, w_ptr, b_ptr, out_ptr, n_rows, n_cols, eps,
               BLOCK_O: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_O + tl.arange(0, BLOCK_O)
    row_mask = rows < n_rows
    row_off = rows[:, None] * n_cols
    # Statistics of d = x - pivot, pivot = each row's first element for LayerNorm (0 for RMSNorm):
    # the shifted sums keep E[d^2] - E[d]^2 free of cancellation even when |mean| >> std.
    pivot = {{pivot}}
    acc_s = tl.zeros((BLOCK_O, BLOCK_D), dtype=tl.float32)
    acc_q = tl.zeros((BLOCK_O, BLOCK_D), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_D):
        cols = start + tl.arange(0, BLOCK_D)
        mask = row_mask[:, None] & (cols < n_cols)[None, :]
        x = tl.load(x_ptr + row_off + cols[None, :], mask=mask, other=0.0)
        d = tl.where(mask, x - pivot[:, None], 0.0)
        acc_s += d
        acc_q += d * d
    # kgym-scaffold: begin the row statistics (centre and reciprocal scale per row)
    mean_d = tl.sum(acc_s, axis=1) / n_cols
    mean_q = tl.sum(acc_q, axis=1) / n_cols
    center = {{center}}
    rstd = {{rstd}}
    # kgym-scaffold: end
    for start in range(0, n_cols, BLOCK_D):
        cols = start + tl.arange(0, BLOCK_D)
        col_mask = cols < n_cols
        mask = row_mask[:, None] & col_mask[None, :]
        x = tl.load(x_ptr + row_off + cols[None, :], mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=col_mask, other=0.0)
        y = (x - center[:, None]) * rstd[:, None] * w[None, :]{{add_bias}}
        tl.store(out_ptr + row_off + cols[None, :], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 255, eps: float = {{eps}}):
        super().__init__()
        # the same module, built and re-drawn in the same order as the reference's, so the
        # parameters match; forward only reads them
        self.norm = {{module}}(dim, eps=eps)
        nn.init.normal_(self.norm.weight, mean=1.0, std=0.5)
{{init_bias}}
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        n_rows = x2.shape[0]
        out = torch.empty_like(x2)
        TILE = 4096  # elements per loop step: 32 fp32 values per thread at 4 warps
        BLOCK_D = min(triton.next_power_of_2(n_cols), TILE)
        BLOCK_O = min(triton.next_power_of_2(n_rows), max(1, TILE // BLOCK_D))
        grid = (triton.cdiv(n_rows, BLOCK_O),)
        {{kernel}}[grid](x2, self.norm.weight, {{bias_arg}}, out, n_rows, n_cols, self.norm.eps,
                         BLOCK_O=BLOCK_O, BLOCK_D=BLOCK_D)
        return out.view(x.shape)
