# problem: level2/40_Matmul_Scaling_ResidualAdd.py
# sizes: batch_size=32,in_features=48,out_features=40
# hybrid: true
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_residual_inplace(y_ptr, n, s, BLOCK: tl.constexpr):
    # x * s + x, in place on the GEMM's output (the reference's clone is the same values)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(y_ptr + offs, y * s + y, mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = torch.addmm(self.matmul.bias, x, self.matmul.weight.t())
        n = y.numel()
        scale_residual_inplace[(triton.cdiv(n, 256),)](y, n, self.scaling_factor, BLOCK=256)
        return y
