# problem: level1/40_LayerNorm.py
# sizes: batch_size=3,features=4,dim1=9,dim2=11
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(x_ptr, acc_ptr, N, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    # grid (rows, chunks): each program adds its chunk's sum into the row's accumulator
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    base = x_ptr + row * N
    s = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, CHUNK, BLOCK):
        offs = c * CHUNK + i + tl.arange(0, BLOCK)
        s += tl.load(base + offs, mask=offs < N, other=0.0)
    tl.atomic_add(acc_ptr + row, tl.sum(s, axis=0))


@triton.jit
def partial_sq_kernel(x_ptr, sum_ptr, acc_ptr, N, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    mean = tl.load(sum_ptr + row) / N
    base = x_ptr + row * N
    s = tl.zeros((BLOCK,), tl.float32)
    for i in range(0, CHUNK, BLOCK):
        offs = c * CHUNK + i + tl.arange(0, BLOCK)
        m = offs < N
        d = tl.where(m, tl.load(base + offs, mask=m, other=0.0) - mean, 0.0)
        s += d * d
    tl.atomic_add(acc_ptr + row, tl.sum(s, axis=0))


@triton.jit
def normalize_kernel(x_ptr, w_ptr, b_ptr, y_ptr, sum_ptr, sq_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    offs = c * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    mean = tl.load(sum_ptr + row) / N
    rstd = 1.0 / tl.sqrt(tl.load(sq_ptr + row) / N + eps)
    x = tl.load(x_ptr + row * N + offs, mask=m, other=0.0)
    w = tl.load(w_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + row * N + offs, (x - mean) * rstd * w + b, mask=m)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.normalized_shape = tuple(normalized_shape)
        # the same parameters nn.LayerNorm creates: ones and zeros of the normalized shape
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape))
        self.eps = 1e-5

    def forward(self, x):
        N = self.weight.numel()
        x2 = x.contiguous().view(-1, N)
        R = x2.shape[0]
        sums = torch.zeros(R, device=x.device, dtype=torch.float32)
        sqs = torch.zeros(R, device=x.device, dtype=torch.float32)
        BLOCK, CHUNK = 128, 256
        chunks = triton.cdiv(N, CHUNK)
        partial_sum_kernel[(R, chunks)](x2, sums, N, CHUNK=CHUNK, BLOCK=BLOCK)
        partial_sq_kernel[(R, chunks)](x2, sums, sqs, N, CHUNK=CHUNK, BLOCK=BLOCK)
        y = torch.empty_like(x2)
        normalize_kernel[(R, triton.cdiv(N, BLOCK))](x2, self.weight, self.bias, y, sums, sqs, N, self.eps,
                                                     BLOCK=BLOCK)
        return y.view_as(x)
