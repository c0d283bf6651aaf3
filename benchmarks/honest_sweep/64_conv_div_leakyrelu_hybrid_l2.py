# problem: level2/71_Conv2d_Divide_LeakyReLU.py
# sizes: batch_size=2,in_channels=3,out_channels=6,height=(12, 12)
# hybrid: true
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_div_leaky(y_ptr, b_ptr, o_ptr, C, HW, n, divisor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    c = (offs // HW) % C
    y = (tl.load(y_ptr + offs, mask=m) + tl.load(b_ptr + c, mask=m)) / divisor
    tl.store(o_ptr + offs, tl.where(y > 0, y, y * 0.01), mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divisor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, None, self.conv.stride, self.conv.padding)
        out = torch.empty_like(y)
        N, C, H, W = y.shape
        n = y.numel()
        bias_div_leaky[(triton.cdiv(n, 256),)](y, self.conv.bias, out, C, H * W, n, float(self.divisor), BLOCK=256)
        return out
