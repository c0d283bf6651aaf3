# problem: level2/1_Conv2D_ReLU_BiasAdd.py
# sizes: batch_size=2,in_channels=3,out_channels=8,height=10
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_add_kernel(y_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(y_ptr + offs, mask=m, other=0.0)
    b = tl.load(b_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(y, 0.0) + b, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.conv(x).contiguous()
        # the (C, 1, 1) bias broadcast to the conv output's shape and made dense: an elementwise kernel then
        # reads both at the same offset
        b = self.bias.expand_as(y).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        relu_add_kernel[(triton.cdiv(n, 1024),)](y, b, out, n, BLOCK=1024)
        return out
