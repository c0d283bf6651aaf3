# problem: level1/40_LayerNorm.py
# sizes: batch_size=3,features=4,dim1=9,dim2=17
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_moments(x_ptr, part_ptr, D, CHUNK: tl.constexpr, BLOCK: tl.constexpr):
    # stage 1: each program sums one chunk of a row and the squared deviations from the chunk's mean
    row, ch = tl.program_id(0), tl.program_id(1)
    nch = tl.num_programs(1)
    start = ch * CHUNK
    cnt = tl.minimum(D - start, CHUNK)
    s = tl.zeros((BLOCK,), tl.float32)
    for i0 in range(0, CHUNK, BLOCK):
        i = start + i0 + tl.arange(0, BLOCK)
        s += tl.load(x_ptr + row * D + i, mask=(i < D) & (i < start + CHUNK), other=0.0)
    mean = tl.sum(s, 0) / cnt
    q = tl.zeros((BLOCK,), tl.float32)
    for i0 in range(0, CHUNK, BLOCK):
        i = start + i0 + tl.arange(0, BLOCK)
        m = (i < D) & (i < start + CHUNK)
        d = tl.where(m, tl.load(x_ptr + row * D + i, mask=m, other=0.0) - mean, 0.0)
        q += d * d
    base = part_ptr + (row * nch + ch) * 3
    tl.store(base, cnt.to(tl.float32))
    tl.store(base + 1, mean)
    tl.store(base + 2, tl.sum(q, 0))


@triton.jit
def combine_normalise(x_ptr, part_ptr, w_ptr, b_ptr, y_ptr, D, NCH, eps, BLOCK: tl.constexpr, PB: tl.constexpr):
    # stage 2: Chan's parallel combination of the chunks' (count, mean, M2), then y = (x - mu) * rstd * w + b
    row = tl.program_id(0)
    j = tl.arange(0, PB)
    jm = j < NCH
    cnt = tl.load(part_ptr + (row * NCH + j) * 3, mask=jm, other=0.0)
    mu = tl.load(part_ptr + (row * NCH + j) * 3 + 1, mask=jm, other=0.0)
    m2 = tl.load(part_ptr + (row * NCH + j) * 3 + 2, mask=jm, other=0.0)
    mean = tl.sum(cnt * mu, 0) / D
    dm = tl.where(jm, mu - mean, 0.0)
    var = (tl.sum(m2, 0) + tl.sum(cnt * dm * dm, 0)) / D
    rstd = 1.0 / tl.sqrt(var + eps)
    for i0 in range(0, D, BLOCK):
        i = i0 + tl.arange(0, BLOCK)
        m = i < D
        x = tl.load(x_ptr + row * D + i, mask=m)
        tl.store(y_ptr + row * D + i, (x - mean) * rstd * tl.load(w_ptr + i, mask=m) + tl.load(b_ptr + i, mask=m),
                 mask=m)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        D = self.ln.weight.numel()
        x2 = x.contiguous().view(-1, D)
        R = x2.shape[0]
        CHUNK = 128
        nch = triton.cdiv(D, CHUNK)
        part = torch.empty((R, nch, 3), device=x.device, dtype=torch.float32)
        partial_moments[(R, nch)](x2, part, D, CHUNK=CHUNK, BLOCK=64)
        y = torch.empty_like(x2)
        combine_normalise[(R,)](x2, part, self.ln.weight, self.ln.bias, y, D, nch, self.ln.eps, BLOCK=128,
                                PB=triton.next_power_of_2(nch))
        return y.view(x.shape)
