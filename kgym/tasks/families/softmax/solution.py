"""{{title}} over the rows of a 2-D tensor in Triton.

Rows that fit in one tile (dim <= MAX_BLOCK) are read once: several short rows share a program, the
row is kept in registers, and max, sum and output come from that one read (8 bytes per element).
Longer rows take two passes in one program: an online pass that keeps a running max and a sum
rescaled to it, then a pass that writes the output (12 bytes per element; the second read of a
row mostly hits L2). About 4 FLOPs per element plus one exp (two for softmax's write pass)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# Widest row tile kept in registers: 4096 fp32 over 8 warps is 16 values per thread.
MAX_BLOCK = 4096
# Elements per program for short rows: enough rows per program that a 16-wide row does not launch
# a program of its own (a program per 16 floats leaves the GPU idle on launch overhead).
TILE = 4096


@triton.jit
def {{kernel}}(
        x_ptr, out_ptr, n_rows, n_cols, stride_x, stride_out,
        ROWS: tl.constexpr, BLOCK: tl.constexpr, ONE_TILE: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    row_ok = rows < n_rows
    # Rows past the end read the last row instead of masked -inf (a row of -inf gives -inf - -inf =
    # nan); they are never stored.
    rows = tl.minimum(rows, n_rows - 1).to(tl.int64)
    x_rows = x_ptr + rows[:, None] * stride_x
    out_rows = out_ptr + rows[:, None] * stride_out
    cols = tl.arange(0, BLOCK)[None, :]
    if ONE_TILE:
        mask = cols < n_cols
        # Padding lanes load -inf: they cannot win the max and exp(-inf) adds nothing to the sum.
        x = tl.load(x_rows + cols, mask=mask, other=float("-inf"))
        # kgym-scaffold: begin the row's max and sum of exp(x - max), and the output y of the tile
        row_max = tl.max(x, axis=1)[:, None]
        row_sum = tl.sum(tl.exp(x - row_max), axis=1)[:, None]
        y = {{out_expr}}
        # kgym-scaffold: end
        tl.store(out_rows + cols, y, mask=row_ok[:, None] & mask)
    else:
        # One running max and rescaled sum per lane; lanes are merged once at the end, so the loop
        # carries no cross-lane reduction. The first block is full (n_cols > BLOCK), so every lane
        # is finite after it.
        m = tl.full([ROWS, BLOCK], float("-inf"), tl.float32)
        s = tl.zeros([ROWS, BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            mask = start + cols < n_cols
            x = tl.load(x_rows + start + cols, mask=mask, other=float("-inf"))
            # kgym-scaffold: begin the online update of the running max m and rescaled sum s
            m_new = tl.maximum(m, x)
            s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
            m = m_new
            # kgym-scaffold: end
        # kgym-scaffold: begin merging the lanes into the row's max and sum of exp(x - max)
        row_max = tl.max(m, axis=1)[:, None]
        row_sum = tl.sum(s * tl.exp(m - row_max), axis=1)[:, None]
        # kgym-scaffold: end
        for start in range(0, n_cols, BLOCK):
            mask = start + cols < n_cols
            x = tl.load(x_rows + start + cols, mask=mask, other=0.0)
            # kgym-scaffold: begin the output y of this block
            y = {{out_expr}}
            # kgym-scaffold: end
            tl.store(out_rows + start + cols, y, mask=row_ok[:, None] & mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        out = torch.empty_like(x)
        block = min(triton.next_power_of_2(n_cols), MAX_BLOCK)
        rows = max(1, min(TILE // block, triton.next_power_of_2(n_rows)))
        grid = (triton.cdiv(n_rows, rows),)
        {{kernel}}[grid](
            x, out, n_rows, n_cols, x.stride(0), out.stride(0), ROWS=rows, BLOCK=block,
            ONE_TILE=n_cols <= block, num_warps=8 if rows * block >= 2048 else 4)
        return out
