# problem: level1/92_cumsum_exclusive.py
# sizes: batch_size=3,input_shape=(500,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_rows(x_ptr, y_ptr, N, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros((), tl.float32)
    for start in range(0, N, BLOCK):
        c = start + tl.arange(0, BLOCK)
        m = c < N
        v = tl.load(x_ptr + row * stride_x + c, mask=m, other=0.0)
        tl.store(y_ptr + row * N + c, tl.cumsum(v, axis=0) + carry, mask=m)
        carry += tl.sum(v, axis=0)


class ModelNew(nn.Module):
    """The reference's own structure: an inclusive scan of x without its last value, after a zero column."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        head = x.narrow(dim=self.dim, start=0, length=x.size(self.dim) - 1)
        B, n = head.shape
        scanned = torch.empty((B, n), device=x.device, dtype=x.dtype)
        cumsum_rows[(B,)](head, scanned, n, head.stride(0), BLOCK=256)
        zero_col = torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim))
        return torch.cat((zero_col, scanned), dim=self.dim)
