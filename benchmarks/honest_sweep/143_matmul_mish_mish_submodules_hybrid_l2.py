# problem: level2/29_Matmul_Mish_Mish.py
# sizes: batch_size=5,in_features=24,out_features=19
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    # mish(x) = x * tanh(softplus(x)); softplus stable, tanh through the sigmoid
    sp = tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))
    sp = tl.where(x > 20.0, x, sp)
    tl.store(y_ptr + offs, x * (2.0 * tl.sigmoid(2.0 * sp) - 1.0), mask=m)


class TritonMish(nn.Module):
    """A drop-in nn.Mish whose forward is one Triton launch."""

    def __init__(self, block: int = 512):
        super().__init__()
        self.block = block

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        mish_kernel[(triton.cdiv(n, self.block),)](x, y, n, BLOCK=self.block)
        return y


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.acts = nn.ModuleList([TritonMish(), TritonMish(256)])

    def forward(self, x):
        x = self.linear(x)
        for act in self.acts:
            x = act(x)
        return x
