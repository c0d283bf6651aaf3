# problem: level1/91_cumsum_reverse.py
# sizes: batch_size=4,input_shape=(777,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def cumsum_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros((), tl.float32)
    for start in range(0, N, BLOCK):
        c = start + tl.arange(0, BLOCK)
        m = c < N
        x = tl.load(x_ptr + row * N + c, mask=m, other=0.0)
        tl.store(y_ptr + row * N + c, tl.associative_scan(x, 0, _add) + carry, mask=m)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    """Reverse cumsum as the reference spells it: flip, a forward scan in Triton, flip back."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        xf = x.flip(self.dim).contiguous()
        y = torch.empty_like(xf)
        cumsum_kernel[(xf.shape[0],)](xf, y, xf.shape[1], BLOCK=256)
        return y.flip(self.dim)
