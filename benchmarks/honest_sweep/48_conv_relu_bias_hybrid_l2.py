# problem: level2/1_Conv2D_ReLU_BiasAdd.py
# sizes: batch_size=2,in_channels=3,out_channels=8,height=10
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_bias_inplace(y_ptr, b_ptr, HW, C, n_elements, BLOCK: tl.constexpr):
    # y = relu(y) + b[c], in place on the conv's own output (NCHW contiguous)
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    c = (offs // HW) % C
    y = tl.load(y_ptr + offs, mask=mask)
    b = tl.load(b_ptr + c, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(y, 0.0) + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        y = self.conv(x)  # the one library call: cuDNN conv with its own bias
        n = y.numel()
        C, HW = y.shape[1], y.shape[2] * y.shape[3]
        BLOCK = 1024
        relu_bias_inplace[(triton.cdiv(n, BLOCK),)](y, self.bias, HW, C, n, BLOCK=BLOCK)
        return y
