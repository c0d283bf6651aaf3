# problem: level2/73_Conv2d_BatchNorm_Scaling.py
# sizes: batch_size=4,in_channels=3,out_channels=6,height=(10, 10)
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def channel_stats(y_ptr, mean_ptr, rstd_ptr, N, C, HW, eps, BLOCK: tl.constexpr):
    # Welford-free two-level sums: per-plane partial sums in fp32, then the channel's mean and
    # centred variance (biased, as BatchNorm normalises with in training)
    c = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for n in range(0, N):
        base = y_ptr + n * C * HW + c * HW
        for s in range(0, HW, BLOCK):
            i = s + tl.arange(0, BLOCK)
            acc += tl.load(base + i, mask=i < HW, other=0.0)
    cnt = N * HW
    mean = tl.sum(acc, 0) / cnt
    acc2 = tl.zeros((BLOCK,), tl.float32)
    for n in range(0, N):
        base = y_ptr + n * C * HW + c * HW
        for s in range(0, HW, BLOCK):
            i = s + tl.arange(0, BLOCK)
            v = tl.load(base + i, mask=i < HW, other=0.0)
            d = tl.where(i < HW, v - mean, 0.0)
            acc2 += d * d
    tl.store(mean_ptr + c, mean)
    tl.store(rstd_ptr + c, 1.0 / tl.sqrt(tl.sum(acc2, 0) / cnt + eps))


@triton.jit
def bn_scale_inplace(y_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, C, HW, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    c = (offs // HW) % C
    y = tl.load(y_ptr + offs, mask=m)
    r = (y - tl.load(mean_ptr + c, mask=m)) * tl.load(rstd_ptr + c, mask=m)
    r = r * tl.load(w_ptr + c, mask=m) + tl.load(b_ptr + c, mask=m)
    tl.store(y_ptr + offs, r * scale, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bn = nn.BatchNorm2d(out_channels)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = self.conv(x)
        N, C, H, W = y.shape
        mean = torch.empty(C, device=y.device, dtype=y.dtype)
        rstd = torch.empty_like(mean)
        channel_stats[(C,)](y, mean, rstd, N, C, H * W, self.bn.eps, BLOCK=64)
        n = y.numel()
        bn_scale_inplace[(triton.cdiv(n, 512),)](y, mean, rstd, self.bn.weight, self.bn.bias, C, H * W, n,
                                                self.scaling_factor, BLOCK=512)
        return y
