# problem: level2/17_Conv2d_InstanceNorm_Divide.py
# sizes: batch_size=2,in_channels=3,out_channels=4,height=12
# hybrid: true
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def instnorm_div_kernel(x_ptr, o_ptr, HW, eps, inv_div, BLOCK: tl.constexpr):
    # one program per (n, c) plane: two passes (mean, then centred variance), then normalise and divide
    row = tl.program_id(0)
    base = x_ptr + row * HW
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, HW, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        acc += tl.load(base + offs, mask=offs < HW, other=0.0)
    mean = tl.sum(acc, 0) / HW
    acc2 = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, HW, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        v = tl.load(base + offs, mask=offs < HW, other=0.0)
        d = tl.where(offs < HW, v - mean, 0.0)
        acc2 += d * d
    rstd = tl.math.rsqrt(tl.sum(acc2, 0) / HW + eps)
    for s in range(0, HW, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        v = tl.load(base + offs, mask=offs < HW, other=0.0)
        tl.store(o_ptr + row * HW + offs, (v - mean) * rstd * inv_div, mask=offs < HW)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.instance_norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, self.conv.bias)
        N, C, H, W = y.shape
        out = torch.empty_like(y)
        instnorm_div_kernel[(N * C,)](y, out, H * W, self.instance_norm.eps, 1.0 / self.divide_by, BLOCK=64)
        return out
