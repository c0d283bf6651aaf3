"""KernelBench level 1, problem 36 (RMS normalization over the feature dimension, dim 1, of (B, F, ...)).

The input is seen as (B, F, S) with S the product of the trailing dimensions (a view, no copy). Each
program owns one batch index and BLOCK_S consecutive positions, loads coalesced along S: pass 1 sums x^2
over the F features in FP32, pass 2 writes x / sqrt(sum / F + eps) (a true division, as the reference
divides). 8 bytes read and 4 written per element. At full size (112, 64, 512, 512) the input has 1.9e9
elements, so offsets are int64.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, out_ptr, F, S, inv_f, eps, BLOCK_S: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    s = tl.program_id(1).to(tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S)
    mask = s < S
    base = b * F * S
    acc = tl.zeros([BLOCK_S], tl.float32)
    for f in range(0, F):
        x = tl.load(x_ptr + base + f * S + s, mask=mask, other=0.0).to(tl.float32)
        acc += x * x
    rms = tl.sqrt(acc * inv_f + eps)
    for f in range(0, F):
        x = tl.load(x_ptr + base + f * S + s, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + base + f * S + s, x / rms, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, F = x.shape[0], x.shape[1]
        S = x.numel() // (B * F)
        out = torch.empty_like(x)
        BLOCK_S = min(1024, triton.next_power_of_2(S))
        rms_norm_kernel[(B, triton.cdiv(S, BLOCK_S))](x, out, F, S, 1.0 / F, self.eps, BLOCK_S=BLOCK_S, num_warps=4)
        return out
