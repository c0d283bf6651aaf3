# problem: level2/67_Conv2d_GELU_GlobalAvgPool.py
# sizes: batch_size=2,in_channels=3,out_channels=5,height=(12, 9)
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_mean_planes(y_ptr, o_ptr, HW, BLOCK: tl.constexpr):
    # exact (erf) GELU, then the mean of each (n, c) plane
    p = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for s in range(0, HW, BLOCK):
        i = s + tl.arange(0, BLOCK)
        v = tl.load(y_ptr + p * HW + i, mask=i < HW, other=0.0)
        acc += 0.5 * v * (1.0 + tl.math.erf(v * 0.7071067811865476))
    tl.store(o_ptr + p, tl.sum(acc, 0) / HW)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x)
        N, C, H, W = y.shape
        out = torch.empty((N, C), device=y.device, dtype=y.dtype)
        gelu_mean_planes[(N * C,)](y, out, H * W, BLOCK=64)
        return out
