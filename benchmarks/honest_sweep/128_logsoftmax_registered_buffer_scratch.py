# problem: level1/24_LogSoftmax.py
# sizes: batch_size=5,dim=900
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_stats(x_ptr, stats_ptr, N, BLOCK: tl.constexpr):
    # pass 1: per row max and sum(exp(x - max)), written to a (rows, 2) scratch
    row = tl.program_id(0)
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(x_ptr + row * N + c, mask=c < N, other=float("-inf")))
    mx = tl.max(m, axis=0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, N, BLOCK):
        c = s + tl.arange(0, BLOCK)
        acc += tl.exp(tl.load(x_ptr + row * N + c, mask=c < N, other=float("-inf")) - mx)
    tl.store(stats_ptr + row * 2, mx)
    tl.store(stats_ptr + row * 2 + 1, tl.log(tl.sum(acc, axis=0)))


@triton.jit
def apply_log_softmax(x_ptr, stats_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mx = tl.load(stats_ptr + row * 2)
    lse = tl.load(stats_ptr + row * 2 + 1)
    x = tl.load(x_ptr + row * N + c, mask=c < N)
    tl.store(y_ptr + row * N + c, x - mx - lse, mask=c < N)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim
        # scratch for the row statistics, a non-persistent buffer grown on demand
        self.register_buffer("stats", torch.empty(0), persistent=False)

    def forward(self, x):
        x = x.contiguous()
        rows, n = x.shape
        if self.stats.numel() < rows * 2 or self.stats.device != x.device:
            self.stats = torch.empty(rows * 2, device=x.device, dtype=torch.float32)
        y = torch.empty_like(x)
        BLOCK = 256
        row_stats[(rows,)](x, self.stats, n, BLOCK=BLOCK)
        apply_log_softmax[(rows, triton.cdiv(n, BLOCK))](x, self.stats, y, n, BLOCK=BLOCK)
        return y
