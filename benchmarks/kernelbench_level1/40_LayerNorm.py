"""KernelBench level 1, problem 40 (LayerNorm over the last three dimensions, with its affine weight and bias).

At full size a row (one sample's 64 x 256 x 256 values) holds 4,194,304 elements and there are only 16 rows,
so one program per row would leave the GPU nearly idle: each row is cut into CHUNK-element pieces, one
program per piece. The statistics are two-pass, in FP32, the way torch's own kernel is accurate: pass 1
sums each piece (partial sums, then the row's mean from them), pass 2 sums each piece's squared
deviations from that mean (the variance, never E[x^2] - E[x]^2, which cancels when the mean is large
against the spread), pass 3 writes (x - mean) * rstd * weight + bias. The parameters are the reference's
own: `nn.LayerNorm(normalized_shape)` builds them here exactly as the reference's constructor does.
Offsets are int64: 16 rows x 4M elements pass 2^31 bytes.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def chunk_sums_kernel(x_ptr, mean_ptr, part_ptr, n, chunks, CENTER: tl.constexpr, CHUNK: tl.constexpr,
                      BLOCK: tl.constexpr):
    """part[row, chunk] = sum over the chunk of x (CENTER false) or of (x - mean[row])^2 (CENTER true)."""
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1).to(tl.int64)
    start = chunk * CHUNK
    base = x_ptr + row * n
    lanes = tl.arange(0, BLOCK)
    mean = 0.0
    if CENTER:
        mean = tl.load(mean_ptr + row)
    acc = tl.zeros([BLOCK], tl.float32)
    for off in range(0, CHUNK, BLOCK):
        i = start + off + lanes
        mask = i < n
        x = tl.load(base + i, mask=mask, other=0.0).to(tl.float32)
        if CENTER:
            d = tl.where(mask, x - mean, 0.0)
            acc += d * d
        else:
            acc += x
    tl.store(part_ptr + row * chunks + chunk, tl.sum(acc, axis=0))


@triton.jit
def row_stat_kernel(part_ptr, out_ptr, chunks, scale, add, RSQRT: tl.constexpr, BLOCK: tl.constexpr):
    """out[row] = sum(part[row, :]) * scale (+ add, then 1/sqrt with RSQRT): the mean, or the rstd."""
    row = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for off in range(0, chunks, BLOCK):
        c = off + lanes
        acc += tl.load(part_ptr + row * chunks + c, mask=c < chunks, other=0.0)
    value = tl.sum(acc, axis=0) * scale
    if RSQRT:
        value = 1.0 / tl.sqrt(value + add)
    tl.store(out_ptr + row, value)


@triton.jit
def normalize_kernel(x_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, out_ptr, n, CHUNK: tl.constexpr,
                     BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    start = tl.program_id(1).to(tl.int64) * CHUNK
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    lanes = tl.arange(0, BLOCK)
    for off in range(0, CHUNK, BLOCK):
        i = start + off + lanes
        mask = i < n
        x = tl.load(x_ptr + row * n + i, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + i, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + i, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * n + i, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = self.ln.weight.numel()
        rows = x.numel() // n
        BLOCK = min(1024, triton.next_power_of_2(n))
        CHUNK = max(BLOCK, min(16384, triton.next_power_of_2(triton.cdiv(n, 64))))
        chunks = triton.cdiv(n, CHUNK)
        part = torch.empty((rows, chunks), dtype=torch.float32, device=x.device)
        mean = torch.empty((rows,), dtype=torch.float32, device=x.device)
        rstd = torch.empty((rows,), dtype=torch.float32, device=x.device)
        grid = (rows, chunks)
        stat_block = min(1024, triton.next_power_of_2(chunks))
        chunk_sums_kernel[grid](x, mean, part, n, chunks, CENTER=False, CHUNK=CHUNK, BLOCK=BLOCK, num_warps=4)
        row_stat_kernel[(rows,)](part, mean, chunks, 1.0 / n, 0.0, RSQRT=False, BLOCK=stat_block)
        chunk_sums_kernel[grid](x, mean, part, n, chunks, CENTER=True, CHUNK=CHUNK, BLOCK=BLOCK, num_warps=4)
        row_stat_kernel[(rows,)](part, rstd, chunks, 1.0 / n, self.ln.eps, RSQRT=True, BLOCK=stat_block)
        out = torch.empty_like(x)
        normalize_kernel[grid](x, self.ln.weight, self.ln.bias, mean, rstd, out, n, CHUNK=CHUNK, BLOCK=BLOCK,
                               num_warps=4)
        return out
