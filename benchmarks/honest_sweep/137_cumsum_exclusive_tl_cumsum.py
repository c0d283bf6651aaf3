# problem: level1/92_cumsum_exclusive.py
# sizes: batch_size=3,input_shape=(600,)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def exclusive_cumsum_rows(x_ptr, y_ptr, N, N_OUT, BLOCK: tl.constexpr):
    # the reference prepends a zero and drops the last value: y[0] = 0, y[j] = sum(x[:j]) for j < N_OUT
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros((), tl.float32)
    for start in range(0, N_OUT, BLOCK):
        c = start + tl.arange(0, BLOCK)
        prev = c - 1
        v = tl.load(x_ptr + row * N + prev, mask=(prev >= 0) & (prev < N) & (c < N_OUT), other=0.0)
        s = tl.cumsum(v, axis=0) + carry
        tl.store(y_ptr + row * N_OUT + c, s, mask=c < N_OUT)
        carry += tl.sum(v, axis=0)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        B, N = x.shape
        n_out = N  # cat of a zero row and x[:-1] along dim keeps the length
        y = torch.empty((B, n_out), device=x.device, dtype=x.dtype)
        exclusive_cumsum_rows[(B,)](x, y, N, n_out, BLOCK=256)
        return y
