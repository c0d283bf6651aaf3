# problem: level1/48_Mean_reduction_over_a_dimension.py
# sizes: batch_size=3,dim1=45,dim2=17
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_mean_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < n_rows
    acc = tl.zeros((BLOCK_R, BLOCK_C), tl.float32)
    for c0 in tl.range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        acc += tl.load(x_ptr + rows[:, None].to(tl.int64) * n_cols + cols[None, :],
                       mask=rmask[:, None] & (cols[None, :] < n_cols), other=0.0)
    tl.store(out_ptr + rows, tl.sum(acc, axis=1) / n_cols, mask=rmask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = self.dim % x.dim()
        # move the reduced dimension last and make the rows contiguous (a copy), then reduce rows
        perm = [i for i in range(x.dim()) if i != d] + [d]
        xt = x.permute(*perm).contiguous()
        out_shape = xt.shape[:-1]
        rows = xt.reshape(-1, xt.shape[-1])
        out = torch.empty(rows.shape[0], device=x.device, dtype=x.dtype)
        BLOCK_R, BLOCK_C = 16, 64
        row_mean_kernel[(triton.cdiv(rows.shape[0], BLOCK_R),)](rows, out, rows.shape[0], rows.shape[1],
                                                               BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
        return out.view(out_shape)
