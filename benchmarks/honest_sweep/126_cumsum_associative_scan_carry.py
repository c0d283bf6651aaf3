# problem: level1/89_cumsum.py
# sizes: batch_size=4,input_shape=(1000,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def cumsum_rows(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    # blocked inclusive scan along a row: tl.associative_scan inside a block, a running carry across blocks
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros((), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=m, other=0.0)
        s = tl.associative_scan(x, 0, _add) + carry
        tl.store(y_ptr + row * N + cols, s, mask=m)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        assert self.dim in (1, -1) and x.dim() == 2
        x = x.contiguous()
        y = torch.empty_like(x)
        cumsum_rows[(x.shape[0],)](x, y, x.shape[1], BLOCK=256)
        return y
